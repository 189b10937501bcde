/**
 * Native matmul against the js twin: odd sizes around the 6x16 micro-kernel and 256-deep k blocks, every
 * transpose combination, batch strides (including a broadcast operand) and accumulation, plus the
 * matrix-vector path (m <= 4), and the in-place row-major A path against the packed one (exact). Tolerance: |diff| <= 1e-4 * (1 + |ref|) scaled by sqrt(k)/sqrt(64) for deep k,
 * since both sides round float32 sums in different orders.
 */
import { describe, it } from "vitest";
import { jsKernels } from "../../src/engine/backends/js.js";
import type { MatmulParams } from "../../src/engine/backends/kernels.js";
import { Rng } from "../../src/util/rng.js";
import { expectClose, native, randn } from "./helpers.js";

function check(rng: Rng, p: MatmulParams, label: string): void {
  const aLen = (p.batch - 1) * p.strideA + p.m * p.k,
    bLen = (p.batch - 1) * p.strideB + p.k * p.n;
  const a = randn(rng, Math.max(aLen, 1)),
    b = randn(rng, Math.max(bLen, 1));
  const c0 = randn(rng, p.batch * p.m * p.n);
  const want = c0.slice(),
    got = c0.slice();
  jsKernels.matmul(a, b, want, p);
  native!.matmul(a, b, got, p);
  const tol = 1e-5 * Math.max(8, Math.sqrt(p.k));
  expectClose(got, want, tol, tol, label);
}

describe.skipIf(!native)("native matmul vs js", () => {
  it("matches on odd shapes, all transposes, with and without accumulate", () => {
    const rng = new Rng(1);
    const sizes: [number, number, number][] = [
      [1, 1, 1],
      [1, 7, 33],
      [2, 130, 7],
      [3, 17, 260],
      [4, 33, 65],
      [5, 16, 16],
      [6, 16, 256],
      [7, 33, 130],
      [13, 1, 40],
      [33, 130, 7],
      [64, 64, 64],
      [130, 70, 257],
      [97, 200, 300],
      [1, 513, 64],
    ];
    for (const [m, n, k] of sizes)
      for (const transA of [false, true])
        for (const transB of [false, true])
          for (const accumulate of [false, true])
            check(
              rng,
              { batch: 1, m, n, k, transA, transB, strideA: m * k, strideB: k * n, accumulate },
              `m${m} n${n} k${k} tA${transA} tB${transB} acc${accumulate}`,
            );
  });

  it("matches batched products with strides, broadcast operands and k = 0", () => {
    const rng = new Rng(2);
    for (const [batch, m, n, k] of [
      [3, 7, 9, 5],
      [32, 33, 17, 64],
      [4, 128, 130, 70],
      [2, 1, 100, 50],
    ] as const) {
      for (const transB of [false, true]) {
        check(
          rng,
          { batch, m, n, k, transA: false, transB, strideA: m * k, strideB: k * n, accumulate: false },
          `batch${batch} m${m} n${n} k${k}`,
        );
        check(
          rng,
          { batch, m, n, k, transA: true, transB, strideA: m * k, strideB: 0, accumulate: true },
          `batch${batch} broadcast B`,
        );
        check(
          rng,
          { batch, m, n, k, transA: false, transB, strideA: 0, strideB: k * n + 3, accumulate: false },
          `batch${batch} broadcast A, padded B stride`,
        );
      }
    }
    check(
      rng,
      { batch: 2, m: 3, n: 4, k: 0, transA: false, transB: false, strideA: 0, strideB: 0, accumulate: false },
      "k = 0 overwrites with zeros",
    );
    check(
      rng,
      { batch: 2, m: 3, n: 4, k: 0, transA: false, transB: false, strideA: 0, strideB: 0, accumulate: true },
      "k = 0 accumulate keeps C",
    );
  });

  it("matches at 512 (the benchmark size) within 1e-4 relative", () => {
    const rng = new Rng(3);
    check(
      rng,
      { batch: 1, m: 512, n: 512, k: 512, transA: false, transB: true, strideA: 0, strideB: 0, accumulate: false },
      "512^3",
    );
  });

  it("reads a row-major A in place with the same sums as the packed path, bit for bit", async () => {
    // With AVX-512, a row-major A and at most 512 columns skip packing A (gemmRowA); a transposed A is packed. Both
    // take each dot product in the same order, so the same numbers must come out exactly, partial tiles included.
    const { expect } = await import("vitest");
    const rng = new Rng(4);
    for (const [m, n, k] of [
      [17, 33, 5],
      [37, 96, 96],
      [130, 512, 300],
      [25, 7, 257],
    ]) {
      const a = randn(rng, m * k),
        b = randn(rng, k * n);
      const at = new Float32Array(k * m);
      for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) at[p * m + i] = a[i * k + p]!;
      const base = { batch: 1, m, n, k, transB: false, strideA: 0, strideB: 0, accumulate: false };
      const inPlace = new Float32Array(m * n),
        packed = new Float32Array(m * n);
      native!.matmul(a, b, inPlace, { ...base, transA: false });
      native!.matmul(at, b, packed, { ...base, transA: true });
      expect(Array.from(inPlace), `m${m} n${n} k${k}`).toEqual(Array.from(packed));
    }
  });

  it("rejects buffers shorter than the dimensions say, naming the kernel", async () => {
    const { expect } = await import("vitest");
    const p: MatmulParams = {
      batch: 1,
      m: 4,
      n: 4,
      k: 4,
      transA: false,
      transB: false,
      strideA: 16,
      strideB: 16,
      accumulate: false,
    };
    expect(() => native!.matmul(new Float32Array(15), new Float32Array(16), new Float32Array(16), p)).toThrow(
      /native matmul: argument 0 has 15 elements, needs 16/,
    );
  });
});
