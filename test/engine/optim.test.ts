/** Optimisers (hand-computed AdamW and SGD steps), state round trips, gradient clipping and LR schedules. */
import { beforeAll, describe, expect, it } from "vitest";
import * as E from "../../src/engine/index.js";
import { CheckpointError, NonFiniteError } from "../../src/util/errors.js";
import { expectClose } from "./gradcheck.js";

describe.each(E.availableBackends())("optimisers on %s", (name) => {
  beforeAll(() => void E.setBackend(name));

  it("AdamW: two hand-computed steps with decoupled weight decay", () => {
    const p = E.param([2], [1, -1]);
    const opt = new E.Optimizer(E.adamw({ lr: 0.1, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.1 }), [["p", p]]);
    // Step 1, g = (0.5, -2): mHat = g, vHat = g^2, so the Adam term is sign(g) (to 1e-8).
    // p1 = p - 0.1 (sign(g) + 0.1 p) = (1 - 0.1 * 1.1, -1 + 0.1 * 1.1) = (0.89, -0.89).
    p.grad = Float32Array.from([0.5, -2]);
    opt.step();
    expectClose(p.data, [0.89, -0.89], 1e-6);
    // Step 2, same g: bias-corrected moments are again g and g^2; p2 = p1 - 0.1 (sign(g) + 0.1 p1).
    opt.step();
    expectClose(p.data, [0.89 - 0.1 * (1 + 0.089), -0.89 + 0.1 * (1 + 0.089)], 1e-6);
    expect(opt.steps).toBe(2);
  });

  it("AdamW: moments after a changing gradient match the formula", () => {
    const p = E.param([1], [0]);
    const opt = new E.Optimizer(E.adamw({ lr: 1, weightDecay: 0 }), [p]);
    p.grad = Float32Array.from([1]);
    opt.step();
    p.grad = Float32Array.from([-3]);
    opt.step();
    // m = 0.9*0.1 + 0.1*(-3) = -0.21; v = 0.999*0.001 + 0.001*9 = 0.009999
    const m = -0.21 / (1 - 0.81),
      v = 0.009999 / (1 - 0.998001);
    expectClose(p.data, [-1 - m / (Math.sqrt(v) + 1e-8)], 1e-5);
    const s = opt.state();
    expectClose(s.slots["param.0"]!["m"]!, [-0.21], 1e-6);
    expectClose(s.slots["param.0"]!["v"]!, [0.009999], 1e-6);
  });

  it("SGD with momentum (PyTorch form) and without", () => {
    const p = E.param([1], [1]);
    const opt = new E.Optimizer(E.sgd({ lr: 0.1, momentum: 0.9 }), [p]);
    p.grad = Float32Array.from([1]);
    opt.step(); // buf = 1 → p = 0.9
    opt.step(); // buf = 0.9 + 1 = 1.9 → p = 0.71
    expectClose(p.data, [0.71], 1e-6);
    const q = E.param([2], [1, 2]);
    const plain = new E.Optimizer(E.sgd({ lr: 0.5 }), [q]);
    q.grad = Float32Array.from([2, -2]);
    plain.step();
    expectClose(q.data, [0, 3]);
  });

  it("skips frozen parameters and parameters without gradients (no state for them)", () => {
    const a = E.param([1], [1]),
      b = E.param([1], [1]);
    b.requiresGrad = false;
    b.grad = Float32Array.from([1]);
    const opt = new E.Optimizer(E.adamw({ lr: 0.1 }), [
      ["a", a],
      ["b", b],
    ]);
    opt.step();
    expect(b.data[0]).toBe(1);
    expect(a.data[0]).toBe(1);
    expect(Object.keys(opt.state().slots)).toEqual([]);
  });

  it("state() / loadState() resume bit-exactly", () => {
    const run = (resumeAt: number | null): Float32Array => {
      const p = E.param([3], [1, 2, 3]);
      let opt = new E.Optimizer(E.adamw({ lr: 0.05 }), [["p", p]]);
      for (let i = 0; i < 6; i++) {
        if (i === resumeAt) {
          const saved = opt.state();
          opt = new E.Optimizer(E.adamw({ lr: 0.05 }), [["p", p]]);
          opt.loadState(saved);
        }
        p.grad = Float32Array.from([Math.sin(i), Math.cos(i), 0.5]);
        opt.step();
      }
      return p.data;
    };
    expect(Array.from(run(3))).toEqual(Array.from(run(null)));
  });

  it("loadState rejects a state for other parameters", () => {
    const opt = new E.Optimizer(E.adamw(), [["w", E.param([2], 0)]]);
    expect(() =>
      opt.loadState({ rule: "adamw", step: 1, slots: { w: { m: new Float32Array(3), v: new Float32Array(3) } } }),
    ).toThrow(CheckpointError);
    expect(() => opt.loadState({ rule: "adamw", step: 1, slots: { x: {} } })).toThrow(/unknown parameter "x"/);
    expect(() => opt.loadState({ rule: "sgd", step: 1, slots: {} })).toThrow(/"sgd"/);
  });

  it("clipGradNorm returns the pre-clip norm and scales to maxNorm", () => {
    const a = E.param([2], 0),
      b = E.param([1], 0);
    a.grad = Float32Array.from([3, 0]);
    b.grad = Float32Array.from([4]);
    expect(
      E.clipGradNorm(
        [
          ["a", a],
          ["b", b],
        ],
        1,
      ),
    ).toBeCloseTo(5, 6);
    expectClose([...a.grad, ...b.grad], [0.6, 0, 0.8], 1e-6);
    expect(
      E.clipGradNorm(
        [
          ["a", a],
          ["b", b],
        ],
        10,
      ),
    ).toBeCloseTo(1, 5);
    expectClose([...a.grad, ...b.grad], [0.6, 0, 0.8], 1e-6);
  });

  it("clipGradNorm names the parameter with a non-finite gradient", () => {
    const a = E.param([2], 0),
      b = E.param([2, 1], 0);
    a.grad = Float32Array.from([1, 1]);
    b.grad = Float32Array.from([1, NaN]);
    expect(() =>
      E.clipGradNorm(
        [
          ["layer.a", a],
          ["layer.b", b],
        ],
        1,
      ),
    ).toThrow(NonFiniteError);
    expect(() =>
      E.clipGradNorm(
        [
          ["layer.a", a],
          ["layer.b", b],
        ],
        1,
      ),
    ).toThrow(/gradient of "layer.b" \(2, 1\) is not finite/);
  });
});

describe("learning-rate schedules", () => {
  it("constant", () => {
    expect([0, 5, 1000].map(E.constantLr(0.3))).toEqual([0.3, 0.3, 0.3]);
  });
  it("linear warm-up starts above zero and holds the peak", () => {
    expectClose([0, 1, 2, 3, 4, 100].map(E.linearWarmup(1, 4)), [0.25, 0.5, 0.75, 1, 1, 1]);
  });
  it("cosine: warm-up, half-cosine decay to the floor, then the floor", () => {
    const f = E.cosineLr({ lr: 1, warmupSteps: 2, totalSteps: 6, minLr: 0.1 });
    expectClose([0, 1, 2, 4, 6, 50].map(f), [0.5, 1, 1, 0.55, 0.1, 0.1], 1e-12);
    expectClose([3].map(f), [0.1 + 0.9 * 0.5 * (1 + Math.cos(Math.PI / 4))], 1e-12);
  });
  it("rejects impossible settings", () => {
    expect(() => E.cosineLr({ lr: 1, warmupSteps: 5, totalSteps: 5 })).toThrow(/totalSteps/);
  });
});
