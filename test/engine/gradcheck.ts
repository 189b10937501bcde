/**
 * Test helpers for the engine: finite-difference gradient checks and an allclose matcher.
 *
 * gradcheck(f, inputs): builds float32 leaves from the given values, takes L = sum(w * f(...)) with fixed
 * random weights w (so every output element matters with a different weight), and compares dL/dx from
 * backward() with central differences (L(x + h) - L(x - h)) / 2h, L evaluated in float64 from float32
 * forwards. Tolerance: |analytic - numeric| <= atol + rtol * |numeric|; a NaN analytic or numeric value fails.
 *
 * Defaults (float32, well-conditioned inputs of magnitude ~1): step h = 1e-2, atol = 2e-3, rtol = 2e-2.
 * Truncation error is O(h^2 f''') ~ 1e-4 and rounding error ~ 6e-8 |L| / h ~ 1e-5 for the sizes used here.
 */
import { expect } from "vitest";
import { Rng } from "../../src/util/rng.js";
import { Tensor, mul, noGrad, sum, backward } from "../../src/engine/index.js";
import type { OpName } from "../../src/engine/ops/op-set.js";

/** FD step and tolerances used unless a test states its own. */
export const FD = { step: 1e-2, atol: 2e-3, rtol: 2e-2 };

/** Ops seen in the graphs of gradchecks run so far (for the coverage test). */
export const coveredOps = new Set<OpName>();

/** An input: values and shape. */
export interface Input {
  data: ArrayLike<number>;
  shape: number[];
}

/** Seeded normal values of a shape, scaled. */
export function randInput(shape: number[], seed: number, scale = 1, shift = 0): Input {
  const rng = new Rng(seed);
  let n = 1;
  for (const d of shape) n *= d;
  return { data: Array.from({ length: n }, () => rng.normal() * scale + shift), shape };
}

function collectOps(t: Tensor, seen = new Set<Tensor>()): void {
  if (seen.has(t) || !t.node) return;
  seen.add(t);
  coveredOps.add(t.node.op);
  for (const x of t.node.inputs) collectOps(x, seen);
}

/** Checks backward() against central finite differences for every element of every input. */
export function gradcheck(
  f: (...xs: Tensor[]) => Tensor,
  inputs: Input[],
  opts: Partial<typeof FD> & { wrt?: number[] } = {},
): void {
  const { step, atol, rtol } = { ...FD, ...opts };
  const wrt = opts.wrt ?? inputs.map((_, i) => i);
  const leaves = inputs.map((x, i) => new Tensor(Float32Array.from(x.data), x.shape, wrt.includes(i)));
  const out = f(...leaves);
  const wRng = new Rng(12345);
  const w = new Tensor(
    Float32Array.from({ length: out.size }, () => wRng.normal()),
    out.shape,
  );
  const loss = sum(mul(out, w));
  collectOps(loss);
  backward(loss);

  const lossAt = (): number =>
    noGrad(() => {
      const y = f(...leaves);
      let s = 0;
      for (let i = 0; i < y.size; i++) s += y.data[i]! * w.data[i]!;
      return s;
    });
  for (const i of wrt) {
    const x = leaves[i]!;
    const analytic = x.grad ?? new Float32Array(x.size);
    for (let j = 0; j < x.size; j++) {
      const orig = x.data[j]!;
      x.data[j] = orig + step;
      const lp = lossAt();
      x.data[j] = orig - step;
      const lm = lossAt();
      x.data[j] = orig;
      const numeric = (lp - lm) / (2 * step);
      const err = Math.abs(analytic[j]! - numeric);
      // Written as !(err <= tol) so that a NaN on either side fails (NaN > tol is false).
      if (!(err <= atol + rtol * Math.abs(numeric))) {
        expect.fail(
          `gradient of input ${i} element ${j}: analytic ${analytic[j]} vs numeric ${numeric} (h=${step}, atol=${atol}, rtol=${rtol})`,
        );
      }
    }
  }
}

/** Asserts elementwise |a - b| <= atol + rtol |b|. */
export function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, atol = 1e-5, rtol = 1e-5): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]!,
      e = expected[i]!;
    if (!(Math.abs(a - e) <= atol + rtol * Math.abs(e)) && !(Number.isNaN(a) && Number.isNaN(e)) && a !== e) {
      expect.fail(`element ${i}: got ${a}, expected ${e} (atol ${atol}, rtol ${rtol})`);
    }
  }
}
