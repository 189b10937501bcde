/**
 * The trainer's side of ExGRPO's answer choice (spec §6.5): the mean token entropy of a stored answer under the
 * current policy, checked against softmax entropies computed by hand from the model's logits, and the stored
 * answer that `LoopReplay.select` hands to the step.
 */
import { describe, expect, it } from "vitest";
import { noGrad } from "../../src/engine/index.js";
import { buildModel } from "../../src/trainer/model-setup.js";
import { LoopReplay, meanTokenEntropy, type StoredRollout } from "../../src/trainer/replay.js";
import { AlgorithmSchema } from "../../src/algorithms/index.js";
import { Rng } from "../../src/util/index.js";

const { model, tokenizer } = buildModel(
  { type: "new", arch: "gpt2", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32, tokenizer: "char" },
  5,
);
const stored = (id: string, completion: string, lossMask?: number[]): StoredRollout => {
  const completionIds = tokenizer.encode(completion);
  return {
    id,
    task: "addition",
    exampleId: "addition/train/0",
    promptIds: [tokenizer.bosId ?? 0, ...tokenizer.encode("1+2=")],
    completionIds,
    behaviorLogprobs: completionIds.map(() => -1),
    lossMask: lossMask ?? completionIds.map(() => 1),
    text: completion,
    finishReason: "stop",
    reward: 1,
    terms: { correct: 1 },
    policyVersion: 0,
    step: 1,
  };
};

/** H of softmax(logits/T) at each completion token's scoring position, from the raw logits. */
function entropiesByHand(s: StoredRollout, T: number): number[] {
  const ids = [...s.promptIds, ...s.completionIds];
  const V = tokenizer.vocabSize;
  const logits = noGrad(() => model.forward(Int32Array.from(ids), 1, ids.length, {})).data;
  return s.completionIds.map((_, j) => {
    const row = Array.from(logits.slice((s.promptIds.length - 1 + j) * V, (s.promptIds.length + j) * V), (x) => x / T);
    const mx = Math.max(...row);
    const z = row.reduce((a, x) => a + Math.exp(x - mx), 0);
    return -row.reduce((a, x) => a + (Math.exp(x - mx) / z) * (x - mx - Math.log(z)), 0);
  });
}

describe("lowest-entropy choice under the current policy", () => {
  it("meanTokenEntropy is the mean softmax entropy over the trained tokens", () => {
    const s = stored("a", "3</s>");
    for (const T of [1, 0.5]) {
      const H = entropiesByHand(s, T);
      expect(meanTokenEntropy(model, s, tokenizer.padId, T)).toBeCloseTo(H.reduce((a, b) => a + b) / H.length, 5);
    }
    const masked = stored("b", "3</s>", [1, 0, 0, 0, 0].slice(0, s.completionIds.length));
    expect(meanTokenEntropy(model, masked, tokenizer.padId, 1)).toBeCloseTo(entropiesByHand(masked, 1)[0]!, 5);
  });
  it("LoopReplay.select hands the step the stored answer of lowest mean entropy", () => {
    const config = AlgorithmSchema.parse({ replay: { type: "exgrpo", ratio: 0.5 } }).replay;
    if (config.type !== "exgrpo") throw new Error("unreachable");
    const answers = ["3", "33", "3+0", "xyz"].map((c, i) => stored(`s${i}`, c));
    const H = answers.map((a) => meanTokenEntropy(model, a, tokenizer.padId, 1));
    const replay = new LoopReplay({ ...config, maxPerQuestion: 4 }, "correct");
    const wrong = { ...stored("w", "9"), terms: { correct: 0 } };
    const asRollout = (s: StoredRollout) => ({ ...s, samplerLogprobs: s.behaviorLogprobs, groupId: "g", advantage: 0 });
    replay.collect(
      [{ id: "g", exampleId: "addition/train/0", prompt: "1+2=", rollouts: [...answers, wrong].map(asRollout) }],
      1,
    );
    replay.endStep(1, 2); // pass rate 4/5: started
    expect(replay.select(model, tokenizer.padId, 1, 2, new Rng(0))).toEqual(["addition/train/0"]);
    const best = H.indexOf(Math.min(...H));
    const mixedGroup = { id: "m", exampleId: "addition/train/0", prompt: "1+2=", rollouts: [] };
    replay.attach([mixedGroup]);
    const [row] = mixedGroup.rollouts as unknown as import("../../src/rollout/types.js").Rollout[];
    expect(row!.completionIds).toEqual(answers[best]!.completionIds);
    expect(row!.samplerLogprobs).toEqual(answers[best]!.behaviorLogprobs); // the recorded behaviour log-probs
    expect(replay.replayed.has(row!)).toBe(true);
  });
});
