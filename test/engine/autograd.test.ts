/** Autograd mechanics: no-grad mode, broadcasting gradients, accumulation, graph freeing, loss checks, errors. */
import { describe, expect, it } from "vitest";
import * as E from "../../src/engine/index.js";
import { NonFiniteError, ShapeError } from "../../src/util/errors.js";
import { expectClose } from "./gradcheck.js";

describe("autograd", () => {
  it("records nothing under noGrad and restores the mode after a throw", () => {
    const w = E.param([2], [1, 2]);
    const y = E.noGrad(() => {
      expect(E.isGradEnabled()).toBe(false);
      return E.mul(w, 3);
    });
    expect(y.requiresGrad).toBe(false);
    expect(y.node).toBeNull();
    expect(() =>
      E.noGrad(() => {
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(E.isGradEnabled()).toBe(true);
  });

  it("reduces broadcast gradients to each input's shape", () => {
    const a = E.param([2, 3], [1, 2, 3, 4, 5, 6]);
    const b = E.param([3], [1, 1, 1]);
    const c = E.param([2, 1], [2, 3]);
    E.backward(E.sum(E.mul(E.add(a, b), c)));
    expectClose(b.grad!, [5, 5, 5]); // sum over rows of c
    expectClose(c.grad!, [9, 18]); // row sums of a + b
    expectClose(a.grad!, [2, 2, 2, 3, 3, 3]);
  });

  it("accumulates a tensor used twice, and across backward calls until zeroed", () => {
    const x = E.param([2], [3, -1]);
    E.backward(E.sum(E.mul(x, x)));
    expectClose(x.grad!, [6, -2]);
    E.backward(E.sum(E.mul(x, x)));
    expectClose(x.grad!, [12, -4]);
    x.grad = null;
    E.backward(E.sum(E.mul(x, 2)));
    expectClose(x.grad!, [2, 2]);
  });

  it("buffer hand-over (reshape, add, affine pass dy on) stays correct when inputs repeat", () => {
    const x = E.param([4], [1, 2, 3, 4]);
    const w = E.tensor([1, -1, 2, 0.5], [2, 2]);
    const r = E.reshape(x, [2, 2]);
    E.backward(E.sum(E.mul(E.add(E.add(r, r), E.add(E.reshape(x, [2, 2]), 1)), w)));
    expectClose(x.grad!, [3, -3, 6, 1.5]);
    const y = E.param([2], [1, 1]);
    E.backward(E.sum(E.mul(E.sub(y, E.mul(y, 3)), E.tensor([1, 2], [2]))));
    expectClose(y.grad!, [-2, -4]);
  });

  it("stops at detach() and at frozen leaves", () => {
    const x = E.param([2], [1, 2]);
    const frozen = E.param([2], [5, 5]);
    frozen.requiresGrad = false;
    E.backward(E.sum(E.add(E.mul(x.detach(), frozen), x)));
    expectClose(x.grad!, [1, 1]);
    expect(frozen.grad).toBeNull();
  });

  it("frees the graph: a second backward through it is an error, not a silent zero", () => {
    const x = E.param([2], [1, 2]);
    const h = E.exp(x);
    const loss = E.sum(h);
    E.backward(loss);
    expect(() => E.backward(loss)).toThrow(/already freed/);
    expect(() => E.backward(E.sum(E.mul(h, 2)))).toThrow(/freed/);
  });

  it("backward needs a one-element, finite loss", () => {
    const x = E.param([2], [1, -1]);
    expect(() => E.backward(E.mul(x, 2))).toThrow(ShapeError);
    expect(() => E.backward(E.noGrad(() => E.sum(x)))).toThrow(/does not depend on anything that requires a gradient/);
    expect(() => E.backward(E.sum(E.log(x)))).toThrow(NonFiniteError);
    expect(() => E.backward(E.sum(E.log(x)))).toThrow(
      "backward: loss is NaN; first non-finite value in the output of log (2)",
    );
    expect(() => E.backward(E.sum(E.div(E.abs(x), 0)))).toThrow(
      /loss is Infinity; first non-finite value in the output of affine/,
    );
  });

  it("handles deep graphs without recursion limits", () => {
    const x = E.param([1], [1]);
    let y: E.Tensor = x;
    for (let i = 0; i < 20000; i++) y = E.add(y, 0);
    E.backward(E.sum(y));
    expectClose(x.grad!, [1]);
  });
});

describe("shape errors name the op and the shapes", () => {
  const a = E.zeros([2, 3]);
  it.each([
    ["matmul", () => E.matmul(a, E.zeros([4, 5])), "matmul: (2, 3) @ (4, 5): inner dims 3 != 4"],
    [
      "matmul batch",
      () => E.matmul(E.zeros([2, 2, 3]), E.zeros([3, 3, 1])),
      "matmul: (2, 2, 3) @ (3, 3, 1): batch dims",
    ],
    ["add", () => E.add(a, E.zeros([4])), "add: shapes (2, 3), (4) do not broadcast"],
    ["reshape", () => E.reshape(a, [4, 2]), "reshape: cannot view (2, 3) (6 elements) as (4, 2)"],
    ["slice", () => E.slice(a, 1, 2, 5), "slice: [2, 5) out of range for axis 1 of (2, 3)"],
    ["concat", () => E.concat([a, E.zeros([3, 3])], 1), "concat: shapes (2, 3), (3, 3) differ off axis 1"],
    ["sum axis", () => E.sum(a, 2), "sum: axis 2 out of range for 2 dims"],
    [
      "embedding id",
      () => E.embedding(a, Int32Array.from([2])),
      "embedding: id 2 at position 0 out of range for table (2, 3)",
    ],
    [
      "crossEntropy target",
      () => E.crossEntropy(a, Int32Array.from([0, 3])),
      "crossEntropy: target 3 at row 1 out of range for logits (2, 3)",
    ],
    [
      "layerNorm weight",
      () => E.layerNorm(a, E.zeros([2]), null),
      "layerNorm: x (2, 3) needs weight of shape (3), got (2)",
    ],
    ["tensor data", () => E.tensor([1, 2, 3], [2, 2]), "tensor: 3 values do not fill shape (2, 2) (4 elements)"],
    ["item", () => a.item(), "item: tensor of shape (2, 3) has 6 elements, expected 1"],
  ])("%s", (_name, f, message) => {
    expect(f).toThrow(ShapeError);
    expect(f).toThrow(message);
  });
});
