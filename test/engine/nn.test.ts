/** nn modules: parameter discovery, modes, freezing, Linear/Embedding/norm layers, LoRA adapters and merging. */
import { describe, expect, it } from "vitest";
import * as E from "../../src/engine/index.js";
import { ConfigError } from "../../src/util/errors.js";
import { Rng } from "../../src/util/rng.js";
import { expectClose } from "./gradcheck.js";

class Block extends E.Module {
  attn: E.Linear;
  mlp: E.Linear[];
  norm = new E.RMSNorm(4);
  _cache = E.zeros([3]); // "_" fields are not parameters
  constructor(rng: Rng) {
    super();
    this.attn = new E.Linear(4, 4, { rng, bias: false });
    this.mlp = [new E.Linear(4, 8, { rng }), new E.Linear(8, 4, { rng })];
  }
  forward(x: E.Tensor): E.Tensor {
    const h = E.add(x, this.attn.forward(this.norm.forward(x)));
    return E.add(h, this.mlp[1]!.forward(E.gelu(this.mlp[0]!.forward(h))));
  }
}

class Net extends E.Module {
  emb: E.Embedding;
  blocks: Block[];
  constructor(rng: Rng) {
    super();
    this.emb = new E.Embedding(10, 4, { rng });
    this.blocks = [new Block(rng.split("b0")), new Block(rng.split("b1"))];
  }
  forward(ids: Int32Array): E.Tensor {
    let x = this.emb.forward(ids, [1, ids.length]);
    for (const b of this.blocks) x = b.forward(x);
    return x;
  }
}

describe("Module", () => {
  it("finds parameters by field, in order, with dotted names", () => {
    const names = new Net(new Rng(0)).namedParameters().map(([n]) => n);
    expect(names.slice(0, 7)).toEqual([
      "emb.weight",
      "blocks.0.attn.weight",
      "blocks.0.mlp.0.weight",
      "blocks.0.mlp.0.bias",
      "blocks.0.mlp.1.weight",
      "blocks.0.mlp.1.bias",
      "blocks.0.norm.weight",
    ]);
    expect(names).toHaveLength(13);
    expect(new Net(new Rng(0)).numParameters()).toBe(40 + 2 * (16 + 40 + 36 + 4));
  });

  it("train/eval and freeze/unfreeze reach the whole tree", () => {
    const net = new Net(new Rng(0));
    net.eval();
    expect(net.blocks[1]!.mlp[0]!.training).toBe(false);
    net.train();
    expect(net.blocks[1]!.mlp[0]!.training).toBe(true);
    net.freeze();
    expect(net.trainableParameters()).toEqual([]);
    net.blocks[0]!.unfreeze();
    expect(net.trainableParameters().map(([n]) => n)[0]).toBe("blocks.0.attn.weight");
  });

  it("Linear computes x W^T + b with (out, in) weights; init is seeded", () => {
    const lin = new E.Linear(2, 3, { weight: E.tensor([1, 2, 3, 4, 5, 6], [3, 2]), bias: E.tensor([1, 1, 1], [3]) });
    expectClose(lin.forward(E.tensor([1, 1, 2, 0], [2, 2])).data, [4, 8, 12, 3, 7, 11]);
    const a = new E.Linear(4, 4, { rng: new Rng(9) }),
      b = new E.Linear(4, 4, { rng: new Rng(9) });
    expect(Array.from(a.weight.data)).toEqual(Array.from(b.weight.data));
    expect(a.weight.data.every((v) => Math.abs(v) <= 0.5)).toBe(true);
    expect(() => new E.Linear(2, 3, { weight: E.zeros([2, 3]) })).toThrow(/Linear\(2, 3\): weight \(2, 3\)/);
  });
});

describe("LoRA", () => {
  const ids = Int32Array.from([1, 2, 3]);

  it("starts equal to the base, trains only the adapters, and merges to the same function", () => {
    const rng = new Rng(4);
    const net = new Net(rng);
    const before = E.noGrad(() => net.forward(ids));
    const wrapped = E.applyLoRA(net, {
      rank: 2,
      alpha: 4,
      targets: ["attn", "blocks.1.mlp.0"],
      rng: rng.split("lora"),
    });
    expect(wrapped).toEqual(["blocks.0.attn", "blocks.1.attn", "blocks.1.mlp.0"]);
    expectClose(E.noGrad(() => net.forward(ids)).data, before.data, 0, 0); // B = 0

    const trainable = net.trainableParameters();
    expect(trainable.map(([n]) => n)).toEqual([
      "blocks.0.attn.loraA",
      "blocks.0.attn.loraB",
      "blocks.1.attn.loraA",
      "blocks.1.attn.loraB",
      "blocks.1.mlp.0.loraA",
      "blocks.1.mlp.0.loraB",
    ]);
    const opt = new E.Optimizer(E.adamw({ lr: 0.05 }), trainable);
    const baseWeight = net.blocks[0]!.attn.weight.data.slice();
    for (let i = 0; i < 3; i++) {
      opt.zeroGrad();
      E.backward(E.sum(E.pow(net.forward(ids), 2)));
      opt.step();
    }
    for (const [n, t] of net.namedParameters()) if (!n.includes("lora")) expect(t.grad, n).toBeNull();
    expect(Array.from(net.blocks[0]!.attn.weight.data)).toEqual(Array.from(baseWeight));
    const tuned = E.noGrad(() => net.forward(ids));
    expect(Math.abs(tuned.data[0]! - before.data[0]!)).toBeGreaterThan(1e-4);

    const merged = E.mergeLoRA(net);
    expect(merged).toEqual(wrapped);
    expect(net.blocks[0]!.attn).not.toBeInstanceOf(E.LoRALinear);
    expect(net.namedParameters().some(([n]) => n.includes("lora"))).toBe(false);
    expectClose(E.noGrad(() => net.forward(ids)).data, tuned.data, 1e-5, 1e-5);
  });

  it("a RegExp target, and a target that matches nothing is an error", () => {
    const net = new Net(new Rng(1));
    expect(E.applyLoRA(net, { rank: 1, targets: /mlp\.\d$/, rng: new Rng(2) })).toHaveLength(4);
    expect(() => E.applyLoRA(new Net(new Rng(1)), { rank: 1, targets: ["qProj"], rng: new Rng(2) })).toThrow(
      ConfigError,
    );
  });

  it("dropout on the adapter input applies only in training mode", () => {
    const base = new E.Linear(4, 4, { rng: new Rng(3) });
    const lora = new E.LoRALinear(base, { rank: 2, dropout: 0.5, rng: new Rng(5) });
    lora.loraB = E.param([4, 2], 0.3);
    const x = E.ones([1, 4]);
    lora.eval();
    const a = lora.forward(x),
      b = lora.forward(x);
    expect(Array.from(a.data)).toEqual(Array.from(b.data));
    lora.train();
    expect(Array.from(lora.forward(x).data)).not.toEqual(Array.from(a.data));
  });
});
