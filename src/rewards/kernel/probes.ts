/**
 * Inputs the kernel harness hands a kernel, and the check of what came back (rewards spec §10.3 #1–#5, plus the
 * structural probes of issue 11).
 *
 * Every call gets harness-owned buffers: random canaries around each operand, C pre-filled with garbage, and one of
 * two layouts drawn at random — three separate buffers, or one shared buffer holding A, B and C in a random order
 * (disjoint views of one ArrayBuffer, as a caller's arena would pass them). A kernel cannot tell a timed call from a
 * checked one by layout, and one that assumes its operands live in distinct buffers (or start at offset 0) is wrong.
 *
 * Structural probes run each candidate on inputs random draws almost never produce: zero and identity operands,
 * near-identities, zero rows and columns, sparse and diagonal operands, non-square and degenerate shapes. A fast path
 * keyed on such a structure (or a shortcut that misbehaves on it) is exercised on every evaluation, whatever the
 * random inputs would have triggered.
 */
import { Rng } from "../../util/rng.js";
import type { MatmulShape, OperandRef, PlacedBuffers } from "./types.js";

/** How operand values are drawn. */
export type Fill = "binary" | "normal";

/** One call's harness-owned data: the buffers handed over (private copies are kept by the caller) and the layout. */
export interface CallInput extends PlacedBuffers {
  /** Probe name, for the gate's message. */
  label: string;
}

/** A structural probe: a shape and how to build A and B. */
interface ProbeSpec {
  label: string;
  shape: MatmulShape;
  a: (i: number, p: number) => number;
  b: (p: number, j: number) => number;
}

/** Operand sizes in elements. */
export function sizes(s: MatmulShape): { a: number; b: number; c: number } {
  return { a: s.m * s.k, b: s.k * s.n, c: s.m * s.n };
}

/** Float64 reference product of float32 inputs (read from the views that `input` places). */
export function referenceMatmul(a: Float32Array, b: Float32Array, { m, n, k }: MatmulShape): Float64Array {
  const c = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < k; p++) {
      const x = a[i * k + p]!;
      if (x === 0) continue;
      const row = p * n;
      for (let j = 0; j < n; j++) c[i * n + j] += x * b[row + j]!;
    }
  }
  return c;
}

const canaryValue = (rng: Rng) => (rng.nextU32() - 2147483648) / 1024;

/**
 * Builds one call's buffers. `values` gives A's and B's elements by (row, column); C is garbage. With `shared`, the
 * three operands are disjoint views of one buffer in a random order, each with `canary` elements on both sides.
 */
export function buildInput(
  rng: Rng,
  shape: MatmulShape,
  canary: number,
  shared: boolean,
  label: string,
  a: (i: number, p: number) => number,
  b: (p: number, j: number) => number,
): CallInput {
  const sz = sizes(shape);
  const bodies: Record<"a" | "b" | "c", Float32Array> = {
    a: Float32Array.from({ length: sz.a }, (_, x) => a(Math.floor(x / shape.k), x % shape.k)),
    b: Float32Array.from({ length: sz.b }, (_, x) => b(Math.floor(x / shape.n), x % shape.n)),
    c: Float32Array.from({ length: sz.c }, () => rng.normal() * 7 + 3),
  };
  type X = "a" | "b" | "c";
  const names: X[] = ["a", "b", "c"];
  const groups: X[][] = shared ? [rng.shuffle(names)] : names.map((x) => [x]);
  const buffers: Float32Array[] = [];
  const refs: Partial<Record<"a" | "b" | "c", OperandRef>> = {};
  for (const group of groups) {
    const len = group.reduce((s, x) => s + bodies[x].length + canary, canary);
    const buf = new Float32Array(len);
    let at = 0;
    for (const x of group) {
      for (let i = 0; i < canary; i++) buf[at++] = canaryValue(rng);
      refs[x] = { buffer: buffers.length, offset: at };
      buf.set(bodies[x], at);
      at += bodies[x].length;
    }
    for (let i = 0; i < canary; i++) buf[at++] = canaryValue(rng);
    buffers.push(buf);
  }
  return { label, shape, buffers, a: refs.a!, b: refs.b!, c: refs.c! };
}

/** A random input: {0,1} or standard normal operands, in a random layout unless `shared` is given. */
export function randomInput(
  rng: Rng,
  shape: MatmulShape,
  fill: Fill,
  canary: number,
  label: string,
  shared?: boolean,
): CallInput {
  const value = fill === "binary" ? () => rng.int(2) : () => rng.normal();
  return buildInput(rng, shape, canary, shared ?? rng.random() < 0.5, label, value, value);
}

/** The view of operand `x` in the buffers of `input` (or in read-back copies of them). */
export function view(input: PlacedBuffers, x: "a" | "b" | "c", buffers: Float32Array[] = input.buffers): Float32Array {
  const ref = input[x];
  return buffers[ref.buffer]!.subarray(ref.offset, ref.offset + sizes(input.shape)[x]);
}

/** Shapes other than the timed one: non-square, degenerate (a dimension of 1) and near the timed shape. */
export function probeShapes(s: MatmulShape): MatmulShape[] {
  const cap = (x: number) => Math.max(1, Math.min(x, 160));
  const out: MatmulShape[] = [
    { m: 3, n: 5, k: 7 },
    { m: 7, n: 3, k: 5 },
    { m: 5, n: 7, k: 3 },
    { m: 1, n: cap(s.n), k: cap(s.k) },
    { m: cap(s.m), n: 1, k: cap(s.k) },
    { m: cap(s.m), n: cap(s.n), k: 1 },
    { m: cap(s.m + 1), n: cap(s.n + 3), k: cap(s.k + 2) },
    { m: cap(s.k), n: cap(s.m), k: cap(s.n) },
  ];
  const key = (x: MatmulShape) => `${x.m}x${x.n}x${x.k}`;
  return out.filter((x, i) => key(x) !== key(s) && out.findIndex((y) => key(y) === key(x)) === i);
}

/** The structural probes of one evaluation (their random parts drawn from `rng`). */
export function structuralProbes(rng: Rng, s: MatmulShape): ProbeSpec[] {
  const normal = () => rng.normal();
  const eye = (r: number, c: number) => (r === c ? 1 : 0);
  const z = () => 0;
  const diagonal = (r: number, c: number) => (r === c ? rng.normal() : 0);
  const sparse = () => (rng.random() < 0.9 ? 0 : rng.normal());
  const table = (rows: number, cols: number, f: (r: number, c: number) => number) => {
    const t = Array.from({ length: rows * cols }, (_, x) => f(Math.floor(x / cols), x % cols));
    return (r: number, c: number) => t[r * cols + c]!;
  };
  const near = (rows: number, cols: number, share: number) => {
    const t = table(rows, cols, (r, c) => (r === c ? 1 : rng.random() < share ? rng.normal() : 0));
    const r = rng.int(rows);
    let c = rng.int(cols);
    if (c === r && cols > 1) c = (c + 1) % cols;
    return table(rows, cols, (rr, cc) => (rr === r && cc === c ? 2.5 : t(rr, cc)));
  };
  const zeroRows = (rows: number, cols: number) => {
    const dead = Array.from({ length: rows }, () => rng.random() < 0.5);
    return table(rows, cols, (r) => (dead[r] ? 0 : rng.normal()));
  };
  const zeroCols = (rows: number, cols: number) => {
    const dead = Array.from({ length: cols }, () => rng.random() < 0.5);
    return table(rows, cols, (_, c) => (dead[c] ? 0 : rng.normal()));
  };
  const probes: ProbeSpec[] = [
    { label: "zero A", shape: s, a: z, b: table(s.k, s.n, normal) },
    { label: "zero B", shape: s, a: table(s.m, s.k, normal), b: z },
    { label: "identity A", shape: s, a: eye, b: table(s.k, s.n, normal) },
    { label: "identity B", shape: s, a: table(s.m, s.k, normal), b: eye },
    // One off-diagonal entry at a random position (twice): a kernel that decides "identity" from a fixed sample of
    // positions is wrong here unless both land in its sample; then a 5% dense perturbation.
    { label: "near-identity A (one entry)", shape: s, a: near(s.m, s.k, 0), b: table(s.k, s.n, normal) },
    { label: "near-identity A (another entry)", shape: s, a: near(s.m, s.k, 0), b: table(s.k, s.n, normal) },
    { label: "near-identity A (5% off-diagonal)", shape: s, a: near(s.m, s.k, 0.05), b: table(s.k, s.n, normal) },
    { label: "near-identity B (one entry)", shape: s, a: table(s.m, s.k, normal), b: near(s.k, s.n, 0) },
    { label: "near-identity B (another entry)", shape: s, a: table(s.m, s.k, normal), b: near(s.k, s.n, 0) },
    { label: "near-identity B (5% off-diagonal)", shape: s, a: table(s.m, s.k, normal), b: near(s.k, s.n, 0.05) },
    { label: "zero rows of A", shape: s, a: zeroRows(s.m, s.k), b: table(s.k, s.n, normal) },
    { label: "zero columns of B", shape: s, a: table(s.m, s.k, normal), b: zeroCols(s.k, s.n) },
    { label: "sparse A (90% zeros)", shape: s, a: table(s.m, s.k, sparse), b: table(s.k, s.n, normal) },
    { label: "diagonal A", shape: s, a: table(s.m, s.k, diagonal), b: table(s.k, s.n, normal) },
  ];
  for (const shape of probeShapes(s)) {
    const label = `shape ${shape.m}x${shape.n}x${shape.k}`;
    probes.push({ label, shape, a: table(shape.m, shape.k, normal), b: table(shape.k, shape.n, normal) });
  }
  return probes;
}

/** The structural probes as call inputs; every other probe uses the shared-buffer layout. */
export function structuralInputs(rng: Rng, s: MatmulShape, canary: number): CallInput[] {
  return structuralProbes(rng, s).map((p, i) =>
    buildInput(rng, p.shape, canary, i % 2 === 1, `structural ${p.label}`, p.a, p.b),
  );
}
