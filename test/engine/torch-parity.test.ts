/**
 * Parity with PyTorch: op values and gradients, and optimiser steps, replayed from test/fixtures/engine-ops.json
 * (made by scripts/make-engine-fixture.py in float64). The loss of each case is sum(w * op(inputs)).
 * Tolerance: |ours - torch| <= 2e-5 + 1e-4 |torch| (float32 against a float64 reference).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import * as E from "../../src/engine/index.js";
import { expectClose } from "./gradcheck.js";

interface Case {
  name: string;
  inputs: { shape: number[]; data: number[] }[];
  w: number[];
  out: { shape: number[]; data: number[] };
  grads: number[][];
  targets?: number[];
  posOffset?: number;
  theta?: number;
  mask?: number[];
}
const fixture = JSON.parse(readFileSync(resolve(__dirname, "../fixtures/engine-ops.json"), "utf8")) as {
  cases: Case[];
  optim: {
    p0: number[];
    grads: number[][];
    adamw: number[];
    sgdMomentum: number[];
    clip: { grad: number[]; norm: number; clipped: number[] };
  };
};

const OPS: Record<string, (c: Case, xs: E.Tensor[]) => E.Tensor> = {
  gelu: (_c, [x]) => E.gelu(x!),
  silu: (_c, [x]) => E.silu(x!),
  logSoftmax: (_c, [x]) => E.logSoftmax(x!),
  layerNorm: (_c, [x, w, b]) => E.layerNorm(x!, w!, b!, 1e-5),
  rmsNorm: (_c, [x, w]) => E.rmsNorm(x!, w!, 1e-6),
  crossEntropy: (c, [x]) => E.reshape(E.crossEntropy(x!, Int32Array.from(c.targets!)), [1]),
  rope: (c, [x]) => E.rope(x!, { posOffset: c.posOffset!, theta: c.theta! }),
  attention: (c, [q, k, v]) => E.scaledDotProductAttention(q!, k!, v!, { mask: Float32Array.from(c.mask!) }),
};

describe.each(E.availableBackends())("PyTorch parity on %s", (name) => {
  beforeAll(() => void E.setBackend(name));

  it.each(fixture.cases.map((c) => [c.name, c] as const))("%s: value and gradients", (_n, c) => {
    const xs = c.inputs.map((i) => E.tensor(i.data, i.shape, { requiresGrad: true }));
    const out = OPS[c.name]!(c, xs);
    expect(out.shape).toEqual(c.out.shape);
    expectClose(out.data, c.out.data, 2e-5, 1e-4);
    E.backward(E.sum(E.mul(out, E.tensor(c.w, c.out.shape))));
    xs.forEach((x, i) => expectClose(x.grad!, c.grads[i]!, 2e-5, 1e-4));
  });

  it("AdamW and SGD (momentum, weight decay) match torch.optim over three steps", () => {
    const { p0, grads, adamw, sgdMomentum } = fixture.optim;
    const run = (rule: E.UpdateRule): Float32Array => {
      const p = E.param([p0.length], p0);
      const opt = new E.Optimizer(rule, [p]);
      for (const g of grads) {
        p.grad = Float32Array.from(g);
        opt.step();
      }
      return p.data;
    };
    expectClose(run(E.adamw({ lr: 0.01, betas: [0.9, 0.95], eps: 1e-8, weightDecay: 0.1 })), adamw, 1e-6, 1e-5);
    expectClose(run(E.sgd({ lr: 0.1, momentum: 0.9, weightDecay: 0.01 })), sgdMomentum, 1e-6, 1e-5);
  });

  it("clipGradNorm matches torch.nn.utils.clip_grad_norm_", () => {
    const { grad, norm, clipped } = fixture.optim.clip;
    const p = E.param([4, 3], 0);
    p.grad = Float32Array.from(grad);
    expect(E.clipGradNorm([p], 1)).toBeCloseTo(norm, 4);
    expectClose(p.grad, clipped, 1e-6, 1e-5);
  });
});
