/**
 * SFT's per-token loss mask (src/trainer/sft.ts): a gold given as segments trains its model turns and eos and masks
 * its inserted text (tool output), which stays in the input as context. Checked against a loss computed by hand
 * from the model's logits, by perturbing masked targets (loss and every gradient bit-identical) and unmasking them
 * (both change), and on SAKE's gold, whose masked spans must be exactly what the kg-tools environment inserts.
 */
import { describe, expect, it } from "vitest";
import { backward, noGrad } from "../../src/engine/index.js";
import { createDiffusionModel, createModel } from "../../src/models/index.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import type { Transformer } from "../../src/models/transformer.js";
import { getEnvironment } from "../../src/envs/index.js";
import "../../src/rewards/index.js";
import { getTask } from "../../src/tasks/index.js";
import type { Example } from "../../src/tasks/types.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { encodeExample, makeSftBatch, sftLoss, sftStep, trainSft, type SftBatch } from "../../src/trainer/sft.js";
import { sftWarmStart } from "../../src/trainer/warm-start.js";
import { Optimizer, adamw } from "../../src/engine/index.js";
import { Rng } from "../../src/util/index.js";

const tok = new CharTokenizer();
const enc = (s: string) => tok.encode(s);

// prompt "Q:", then a model turn "ab", a tool answer "xyz" (inserted), a model turn "c", then eos
const EXAMPLE = {
  prompt: "Q:",
  completion: "abxyzc",
  segments: [
    { kind: "model", text: "ab" },
    { kind: "inserted", text: "xyz" },
    { kind: "model", text: "c" },
  ] as const,
};

/** The loss and a copy of every parameter's gradient after one backward pass. */
function lossAndGrads(model: Transformer, b: SftBatch): { loss: number; grads: Float32Array[] } {
  const params = model.trainableParameters().map(([, p]) => p);
  for (const p of params) p.grad = null;
  const loss = sftLoss(model, b);
  backward(loss);
  return { loss: loss.item(), grads: params.map((p) => Float32Array.from(p.grad ?? new Float32Array(p.size))) };
}

describe("SFT loss mask", () => {
  it("encodes a segment gold turn by turn: inserted tokens in the ids, masked; eos trained", () => {
    const e = encodeExample(tok, { ...EXAMPLE, segments: [...EXAMPLE.segments] });
    expect(e.ids).toEqual([tok.bosId, ...enc("Q:abxyzc"), tok.eosId]);
    expect(e.completionStart).toBe(3);
    expect(e.lossMask).toEqual([1, 1, 0, 0, 0, 1, 1]);
    const b = makeSftBatch([e], tok.padId);
    // position t predicts token t + 1: positions 2..8 predict a b x y z c eos; x, y, z are masked
    expect(Array.from(b.targets)).toEqual([-100, -100, ...enc("abxyzc"), tok.eosId]);
    expect(Array.from(b.lossMask)).toEqual([0, 0, 1, 1, 0, 0, 0, 1, 1]);
    expect(b.tokens).toBe(4);
    // without segments every completion token is trained, as before
    expect(makeSftBatch([encodeExample(tok, { prompt: "Q:", completion: "abxyzc" })], tok.padId).tokens).toBe(7);
  });

  it("rejects segments that do not join to the completion, and unknown kinds", () => {
    expect(() => encodeExample(tok, { ...EXAMPLE, completion: "abxyz" })).toThrow(/segments join to "abxyzc"/);
    const bad = [{ kind: "tool", text: "abxyzc" }] as never;
    expect(() => encodeExample(tok, { prompt: "Q:", completion: "abxyzc", segments: bad })).toThrow(/segment kind/);
  });

  it("the loss is the mean NLL over the trained tokens only (computed by hand from the logits)", () => {
    const { model } = createModel("micro-char", new Rng(4));
    const b = makeSftBatch([encodeExample(tok, { ...EXAMPLE, segments: [...EXAMPLE.segments] })], tok.padId);
    const V = model.config.vocabSize;
    const logits = noGrad(() => model.forward(b.ids, 1, b.seqLen)).data; // (1, T, V)
    const nll = (t: number, target: number) => {
      const row = Array.from(logits.subarray(t * V, (t + 1) * V));
      const max = Math.max(...row);
      const lse = max + Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
      return lse - row[target]!;
    };
    const [a, bb, x, y, z, c] = enc("abxyzc");
    const trained = [nll(2, a!), nll(3, bb!), nll(7, c!), nll(8, tok.eosId)]; // "a" "b" "c" eos
    const inserted = [nll(4, x!), nll(5, y!), nll(6, z!)];
    const hand = trained.reduce((s, v) => s + v, 0) / 4; // normaliser: 4 trained tokens, not 7
    const all = [...trained, ...inserted].reduce((s, v) => s + v, 0) / 7;
    const got = noGrad(() => sftLoss(model, b)).item();
    expect(got).toBeCloseTo(hand, 5);
    expect(Math.abs(got - all)).toBeGreaterThan(1e-3); // the mask matters on this model
  });

  it("perturbing masked targets leaves loss and gradients bit-identical; unmasking them changes both", () => {
    const { model } = createModel("micro-char", new Rng(5));
    const b = makeSftBatch(
      [
        encodeExample(tok, { ...EXAMPLE, segments: [...EXAMPLE.segments] }),
        encodeExample(tok, { prompt: "R", completion: "de" }),
      ],
      tok.padId,
    );
    const masked = [...b.lossMask.keys()].filter((i) => b.targets[i] !== -100 && b.lossMask[i] === 0);
    expect(masked).toEqual([4, 5, 6]);
    const perturbed = { ...b, targets: Int32Array.from(b.targets) };
    for (const i of masked) perturbed.targets[i] = (b.targets[i]! + 7) % model.config.vocabSize;
    const base = lossAndGrads(model, b);
    const same = lossAndGrads(model, perturbed);
    expect(Object.is(same.loss, base.loss)).toBe(true);
    same.grads.forEach((g, k) => expect(g).toEqual(base.grads[k]));

    const unmask = (x: SftBatch): SftBatch => {
      const lossMask = Uint8Array.from(x.lossMask);
      for (const i of masked) lossMask[i] = 1;
      return { ...x, lossMask, tokens: x.tokens + masked.length };
    };
    const open = lossAndGrads(model, unmask(b));
    const openPerturbed = lossAndGrads(model, unmask(perturbed));
    for (const other of [open, openPerturbed]) {
      expect(other.loss).not.toBe(base.loss);
      expect(other.grads.some((g, k) => g.some((v, j) => v !== base.grads[k]![j]))).toBe(true);
    }
    expect(openPerturbed.loss).not.toBe(open.loss); // once trained, the targets themselves count
  });

  it("trainSft reports trained tokens only; a diffusion LM refuses segment golds", () => {
    const { model } = createModel("micro-char", new Rng(6));
    const h = trainSft(model, tok, [{ ...EXAMPLE, segments: [...EXAMPLE.segments] }], {
      steps: 2,
      batchSize: 1,
      lr: 1e-3,
      rng: new Rng(0),
    });
    expect(h.map((m) => m.tokens)).toEqual([4, 4]);
    const d = createDiffusionModel("micro-char", new Rng(0), { nLayers: 1 });
    const b = makeSftBatch(
      [encodeExample(d.tokenizer, { ...EXAMPLE, segments: [...EXAMPLE.segments] })],
      d.tokenizer.padId,
    );
    const opt = new Optimizer(adamw({ lr: 1e-3 }), d.model.trainableParameters());
    expect(() => sftStep(d.model, opt, b, 1e-3, 1, new Rng(1))).toThrow(/masked-diffusion LM cannot train on segment/);
  });
});

describe("SAKE gold segments", () => {
  const task = getTask("sake");
  const examples = task.generate("train", 6, 0) as Example[];

  it("masks exactly the tool output the kg-tools environment inserts, and trains the three model turns", async () => {
    const env = getEnvironment(task.environment!.name, task.environment!.options);
    for (const ex of examples) {
      const segs = ex.goldSegments!;
      expect(segs.map((s) => s.kind)).toEqual(["model", "inserted", "model", "inserted", "model"]);
      expect(segs.map((s) => s.text).join("")).toBe(ex.goldCompletion);
      // replay the gold's model turns through the environment: its answers are the inserted segments, token for token
      const episode = env.start(ex);
      const e = encodeExample(tok, { prompt: ex.prompt, completion: ex.goldCompletion, segments: segs });
      const completion = e.ids.slice(e.completionStart);
      const spans: { mask: number; ids: number[] }[] = [];
      completion.forEach((id, j) => {
        const m = e.lossMask![j]!;
        if (spans.at(-1)?.mask === m) spans.at(-1)!.ids.push(id);
        else spans.push({ mask: m, ids: [id] });
      });
      expect(spans.map((s) => s.mask)).toEqual([1, 0, 1, 0, 1]);
      for (let turn = 0; turn < 3; turn++) {
        const modelIds = spans[2 * turn]!.ids;
        const text = segs[2 * turn]!.text;
        expect(modelIds).toEqual(turn === 2 ? [...tok.encode(text), tok.eosId] : tok.encode(text));
        const reply = await episode.step(text, { turn: turn + 1, end: "stop" });
        if (turn === 2) expect(reply).toEqual({ kind: "end" });
        else {
          expect(reply.kind).toBe("observation");
          const inserted = tok.encode((reply as { text: string }).text); // what the episode loop feeds
          expect(spans[2 * turn + 1]!.ids).toEqual(inserted);
          expect(inserted.length).toBeGreaterThan(0);
        }
      }
    }
  });

  it("the SFT warm start passes the segments through: it trains exactly what masked trainSft trains", async () => {
    const config = resolveConfig({
      name: "sake-mask",
      seed: 3,
      model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 512 },
      task: { name: "sake", trainExamples: 6, testExamples: 2 },
      sft: { enabled: true, steps: 2, batchSize: 2, lr: 0.01 },
    });
    const fresh = () =>
      createModel("micro-char", new Rng(7), { dModel: 16, nLayers: 1, nHeads: 2, nKvHeads: 2, maxSeqLen: 512 });
    const warm = fresh();
    await sftWarmStart({ model: warm.model, tokenizer: tok }, examples, config);
    const weights = (m: Transformer) => m.parameters().map((p) => Array.from(p.data));
    const run = (segments: boolean) => {
      const m = fresh();
      const data = examples.map((e) => ({
        prompt: e.prompt,
        completion: e.goldCompletion,
        ...(segments ? { segments: e.goldSegments! } : {}),
      }));
      trainSft(m.model, tok, data, { steps: 2, batchSize: 2, lr: 0.01, rng: new Rng(3).split("sft") });
      return weights(m.model);
    };
    expect(weights(warm.model)).toEqual(run(true));
    expect(weights(warm.model)).not.toEqual(run(false));
  });
});
