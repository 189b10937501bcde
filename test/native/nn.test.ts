/**
 * Native row-wise and network kernels against the js twins: sum/max rows, softmax and log-softmax with
 * gradients, fused cross-entropy (ignore index), LayerNorm/RMSNorm with gradients, RoPE (forward and inverse,
 * with a position offset), attention forward/backward (causal with tk > tq as with a KV cache, GQA, padding
 * masks including fully masked rows), embedding gather/scatter-add, AdamW and sumSquares.
 * Tolerances: 1e-5 relative + 1e-6 absolute for row kernels (float32 vs float64 accumulation over <= 513
 * columns), 1e-4 for attention (two chained float32 products and a softmax), 1e-5 for AdamW and RoPE.
 */
import { describe, expect, it } from "vitest";
import { jsKernels } from "../../src/engine/backends/js.js";
import type { AttentionParams } from "../../src/engine/backends/kernels.js";
import { Rng } from "../../src/util/rng.js";
import { expectClose, native, randInt, randn } from "./helpers.js";

const SHAPES: [number, number][] = [
  [1, 1],
  [1, 7],
  [3, 33],
  [7, 130],
  [33, 513],
  [300, 130],
];

describe.skipIf(!native)("native row and network kernels vs js", () => {
  it("sumRows and maxRows (argmax = first maximum, NaN wins)", () => {
    const rng = new Rng(20);
    for (const [rows, cols] of SHAPES) {
      const x = randn(rng, rows * cols);
      if (cols > 3) x[2] = x[3]!; // a tie
      const w = new Float32Array(rows),
        g = new Float32Array(rows);
      jsKernels.sumRows(x, w, rows, cols);
      native!.sumRows(x, g, rows, cols);
      expectClose(g, w, 1e-5, 1e-5, `sumRows ${rows}x${cols}`);
      const aw = new Int32Array(rows),
        ag = new Int32Array(rows);
      jsKernels.maxRows(x, w, aw, rows, cols);
      native!.maxRows(x, g, ag, rows, cols);
      expectClose(g, w, 0, 0, `maxRows ${rows}x${cols}`);
      expect(Array.from(ag), `argmax ${rows}x${cols}`).toEqual(Array.from(aw));
    }
    const x = new Float32Array([1, 5, 5, 2, 3, NaN, 9, NaN, -Infinity, -Infinity, 4, 4]);
    const w = new Float32Array(3),
      g = new Float32Array(3),
      aw = new Int32Array(3),
      ag = new Int32Array(3);
    jsKernels.maxRows(x, w, aw, 3, 4);
    native!.maxRows(x, g, ag, 3, 4);
    expectClose(g, w, 0, 0, "maxRows special");
    expect(Array.from(ag)).toEqual(Array.from(aw));
  });

  it("softmax, logSoftmax and their gradients (incl. -inf entries and an all -inf row)", () => {
    const rng = new Rng(21);
    for (const [rows, cols] of SHAPES) {
      const x = randn(rng, rows * cols, 3);
      if (rows > 1) for (let c = 0; c < cols; c++) x[cols + c] = -Infinity; // row 1 fully masked
      if (cols > 2) x[1] = -Infinity;
      for (const [fwd, bwd] of [
        ["softmax", "softmaxBackward"],
        ["logSoftmax", "logSoftmaxBackward"],
      ] as const) {
        const yw = new Float32Array(x.length),
          yg = new Float32Array(x.length);
        jsKernels[fwd](x, yw, rows, cols);
        native![fwd](x, yg, rows, cols);
        expectClose(yg, yw, 1e-5, 1e-6, `${fwd} ${rows}x${cols}`);
        if (fwd === "logSoftmax" && rows > 1) continue; // gradient of an all -inf row is NaN on both sides by design
        const dy = randn(rng, x.length),
          d0 = randn(rng, x.length);
        const dw = d0.slice(),
          dg = d0.slice();
        jsKernels[bwd](yw, dy, dw, rows, cols);
        native![bwd](yw, dy, dg, rows, cols);
        expectClose(dg, dw, 1e-5, 1e-5, `${bwd} ${rows}x${cols}`);
      }
    }
  });

  it("crossEntropy and its gradient with an ignore index", () => {
    const rng = new Rng(22);
    for (const [rows, cols] of SHAPES) {
      const x = randn(rng, rows * cols, 4);
      const t = randInt(rng, rows, cols);
      if (rows > 2) t[1] = -100;
      const lw = new Float32Array(rows),
        lg = new Float32Array(rows),
        sw = new Float32Array(rows),
        sg = new Float32Array(rows);
      jsKernels.crossEntropy(x, t, lw, sw, rows, cols, -100);
      native!.crossEntropy(x, t, lg, sg, rows, cols, -100);
      expectClose(lg, lw, 1e-5, 1e-5, `crossEntropy loss ${rows}x${cols}`);
      expectClose(sg, sw, 1e-5, 1e-5, `crossEntropy lse ${rows}x${cols}`);
      const dl = randn(rng, rows),
        d0 = randn(rng, x.length),
        dw = d0.slice(),
        dg = d0.slice();
      jsKernels.crossEntropyBackward(x, t, sw, dl, dw, rows, cols, -100);
      native!.crossEntropyBackward(x, t, sw, dl, dg, rows, cols, -100);
      expectClose(dg, dw, 1e-5, 1e-6, `crossEntropyBackward ${rows}x${cols}`);
    }
    expect(() =>
      native!.crossEntropy(
        new Float32Array(4),
        new Int32Array([0, 2]),
        new Float32Array(2),
        new Float32Array(2),
        2,
        2,
        -100,
      ),
    ).toThrow(/crossEntropy: target id out of range/);
  });

  it("layerNorm and rmsNorm, forward and backward (with and without bias)", () => {
    const rng = new Rng(23);
    for (const [rows, cols] of SHAPES) {
      const x = randn(rng, rows * cols, 2),
        w = randn(rng, cols),
        b = randn(rng, cols),
        dy = randn(rng, rows * cols);
      for (const bias of [b, null]) {
        const ow = new Float32Array(x.length),
          og = new Float32Array(x.length);
        const mw = new Float32Array(rows),
          mg = new Float32Array(rows),
          rw = new Float32Array(rows),
          rg = new Float32Array(rows);
        jsKernels.layerNorm(x, w, bias, ow, mw, rw, rows, cols, 1e-5);
        native!.layerNorm(x, w, bias, og, mg, rg, rows, cols, 1e-5);
        expectClose(og, ow, 1e-5, 1e-5, `layerNorm ${rows}x${cols}`);
        expectClose(rg, rw, 1e-5, 0, `layerNorm rstd ${rows}x${cols}`);
        const dx0 = randn(rng, x.length),
          dw0 = randn(rng, cols),
          db0 = randn(rng, cols);
        const [dxw, dww, dbw, dxg, dwg, dbg] = [
          dx0.slice(),
          dw0.slice(),
          db0.slice(),
          dx0.slice(),
          dw0.slice(),
          db0.slice(),
        ];
        jsKernels.layerNormBackward(x, w, mw, rw, dy, dxw, dww, bias ? dbw : null, rows, cols);
        native!.layerNormBackward(x, w, mw, rw, dy, dxg, dwg, bias ? dbg : null, rows, cols);
        const tol = 1e-5 * Math.max(1, Math.sqrt(rows / 8));
        expectClose(dxg, dxw, 1e-4, 1e-5, `layerNormBackward dx ${rows}x${cols}`);
        expectClose(dwg, dww, tol, tol, `layerNormBackward dw ${rows}x${cols}`);
        expectClose(dbg, dbw, tol, tol, `layerNormBackward db ${rows}x${cols}`);
      }
      const ow = new Float32Array(x.length),
        og = new Float32Array(x.length),
        rw = new Float32Array(rows),
        rg = new Float32Array(rows);
      jsKernels.rmsNorm(x, w, ow, rw, rows, cols, 1e-6);
      native!.rmsNorm(x, w, og, rg, rows, cols, 1e-6);
      expectClose(og, ow, 1e-5, 1e-5, `rmsNorm ${rows}x${cols}`);
      const dx0 = randn(rng, x.length),
        dw0 = randn(rng, cols);
      const [dxw, dww, dxg, dwg] = [dx0.slice(), dw0.slice(), dx0.slice(), dw0.slice()];
      jsKernels.rmsNormBackward(x, w, rw, dy, dxw, dww, rows, cols);
      native!.rmsNormBackward(x, w, rw, dy, dxg, dwg, rows, cols);
      const tol = 1e-5 * Math.max(1, Math.sqrt(rows / 8));
      expectClose(dxg, dxw, 1e-4, 1e-5, `rmsNormBackward dx ${rows}x${cols}`);
      expectClose(dwg, dww, tol, tol, `rmsNormBackward dw ${rows}x${cols}`);
    }
  });

  it("rope forward and inverse with a position offset", () => {
    const rng = new Rng(24);
    for (const [bh, t, d, pos] of [
      [1, 1, 2, 0],
      [3, 7, 16, 5],
      [8, 33, 64, 100],
      [2, 130, 18, 0],
    ] as const) {
      const x = randn(rng, bh * t * d);
      for (const inverse of [false, true]) {
        const w = new Float32Array(x.length),
          g = new Float32Array(x.length);
        jsKernels.rope(x, w, bh, t, d, pos, 10000, inverse);
        native!.rope(x, g, bh, t, d, pos, 10000, inverse);
        expectClose(g, w, 1e-5, 1e-6, `rope bh${bh} t${t} d${d} pos${pos} inverse=${inverse}`);
      }
    }
  });

  it("attention forward and backward: causal with a cache offset, GQA, padding masks", () => {
    const rng = new Rng(25);
    const cases: [AttentionParams, boolean][] = [
      [{ batch: 1, heads: 1, kvHeads: 1, tq: 1, tk: 1, headDim: 8, scale: 0.35, causal: true }, false],
      [{ batch: 2, heads: 4, kvHeads: 2, tq: 7, tk: 7, headDim: 16, scale: 0.25, causal: true }, false],
      [{ batch: 2, heads: 4, kvHeads: 1, tq: 5, tk: 33, headDim: 8, scale: 0.3, causal: true }, true],
      [{ batch: 3, heads: 2, kvHeads: 2, tq: 1, tk: 130, headDim: 32, scale: 0.17, causal: true }, true],
      // one query row (the decoding path): a head size that is not a multiple of 8, keys not a multiple of 4
      [{ batch: 2, heads: 4, kvHeads: 2, tq: 1, tk: 23, headDim: 7, scale: 0.4, causal: true }, true],
      [{ batch: 2, heads: 3, kvHeads: 3, tq: 33, tk: 33, headDim: 7, scale: 0.4, causal: false }, true],
      [{ batch: 8, heads: 4, kvHeads: 4, tq: 64, tk: 64, headDim: 64, scale: 0.125, causal: true }, false],
      [{ batch: 2, heads: 4, kvHeads: 2, tq: 70, tk: 100, headDim: 16, scale: 0.25, causal: true }, false],
    ];
    // Decode over a KV-cache store: one query, unused trailing slots masked (non-causal, as the cache does it).
    const decode: AttentionParams = {
      batch: 3,
      heads: 4,
      kvHeads: 2,
      tq: 1,
      tk: 40,
      headDim: 16,
      scale: 0.25,
      causal: false,
    };
    const trailing = new Float32Array(decode.batch * decode.tk);
    for (let b = 0; b < decode.batch; b++) trailing.fill(1, b * decode.tk, b * decode.tk + [17, 40, 1][b]!);
    for (const [p, masked, fixedMask] of [
      ...cases.map(([c, m]) => [c, m, null] as const),
      [decode, false, trailing] as const,
    ]) {
      const qn = p.batch * p.heads * p.tq * p.headDim,
        kn = p.batch * p.kvHeads * p.tk * p.headDim;
      const q = randn(rng, qn),
        k = randn(rng, kn),
        v = randn(rng, kn);
      let mask: Float32Array | null = fixedMask;
      if (masked) {
        mask = new Float32Array(p.batch * p.tk).fill(1);
        for (let j = 0; j < Math.min(3, p.tk); j++) mask[j] = 0; // left padding in batch 0
        if (p.batch > 1) mask.fill(0, p.tk, 2 * p.tk); // batch 1 fully masked: zero probs and output
      }
      const ow = new Float32Array(qn),
        og = new Float32Array(qn);
      const pw = new Float32Array(p.batch * p.heads * p.tq * p.tk),
        pg = new Float32Array(pw.length);
      jsKernels.attention(q, k, v, ow, pw, mask, p);
      native!.attention(q, k, v, og, pg, mask, p);
      const label = JSON.stringify(p) + (masked ? " masked" : fixedMask ? " trailing slots masked" : "");
      expectClose(pg, pw, 1e-4, 1e-6, `attention probs ${label}`);
      expectClose(og, ow, 1e-4, 1e-5, `attention out ${label}`);
      const dout = randn(rng, qn);
      const [dq0, dk0, dv0] = [randn(rng, qn), randn(rng, kn), randn(rng, kn)];
      const [dqw, dkw, dvw, dqg, dkg, dvg] = [
        dq0.slice(),
        dk0.slice(),
        dv0.slice(),
        dq0.slice(),
        dk0.slice(),
        dv0.slice(),
      ];
      jsKernels.attentionBackward(q, k, v, pw, dout, dqw, dkw, dvw, p);
      native!.attentionBackward(q, k, v, pw, dout, dqg, dkg, dvg, p);
      expectClose(dqg, dqw, 1e-4, 1e-4, `attentionBackward dq ${label}`);
      expectClose(dkg, dkw, 1e-4, 1e-4, `attentionBackward dk ${label}`);
      expectClose(dvg, dvw, 1e-4, 1e-4, `attentionBackward dv ${label}`);
    }
  });

  it("gather and scatterAdd (repeated ids accumulate), ids out of range are errors", () => {
    const rng = new Rng(26);
    for (const [vocab, dim, n] of [
      [1, 1, 1],
      [7, 33, 13],
      [512, 256, 1024],
    ] as const) {
      const table = randn(rng, vocab * dim),
        ids = randInt(rng, n, vocab);
      const w = new Float32Array(n * dim),
        g = new Float32Array(n * dim);
      jsKernels.gather(table, ids, w, dim);
      native!.gather(table, ids, g, dim);
      expectClose(g, w, 0, 0, `gather ${vocab}x${dim}`);
      const dout = randn(rng, n * dim),
        t0 = randn(rng, vocab * dim),
        tw = t0.slice(),
        tg = t0.slice();
      jsKernels.scatterAdd(dout, ids, tw, dim);
      native!.scatterAdd(dout, ids, tg, dim);
      expectClose(tg, tw, 1e-5, 1e-5, `scatterAdd ${vocab}x${dim}`);
    }
    expect(() => native!.gather(new Float32Array(6), new Int32Array([3]), new Float32Array(2), 2)).toThrow(
      /gather: id out of range/,
    );
    expect(() => native!.scatterAdd(new Float32Array(2), new Int32Array([-1]), new Float32Array(6), 2)).toThrow(
      /scatterAdd: id out of range/,
    );
  });

  it("adamw steps and sumSquares", () => {
    const rng = new Rng(27);
    for (const n of [1, 7, 33, 130, 100_003]) {
      const p0 = randn(rng, n),
        g = randn(rng, n),
        m0 = randn(rng, n, 0.1),
        v0 = randn(rng, n, 0.1).map(Math.abs);
      const [pw, mw, vw, pg, mg, vg] = [p0.slice(), m0.slice(), v0.slice(), p0.slice(), m0.slice(), v0.slice()];
      for (let step = 1; step <= 3; step++) {
        jsKernels.adamw(pw, g, mw, vw, 1e-3, 0.9, 0.999, 1e-8, 0.01, step);
        native!.adamw(pg, g, mg, vg, 1e-3, 0.9, 0.999, 1e-8, 0.01, step);
      }
      expectClose(pg, pw, 1e-5, 1e-6, `adamw param n=${n}`);
      expectClose(mg, mw, 1e-5, 1e-7, `adamw m n=${n}`);
      expectClose(vg, vw, 1e-5, 1e-7, `adamw v n=${n}`);
      const sw = jsKernels.sumSquares(g),
        sg = native!.sumSquares(g);
      expect(Math.abs(sg - sw) / sw, `sumSquares n=${n}`).toBeLessThan(1e-12);
    }
  });
});
