import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { loadHfTokenizer } from "../../src/models/hf-tokenizer.js";
import { firstTokenAfter, maskAfterFirstError } from "../../src/trainer/error-credit.js";
import { rewardMetrics } from "../../src/trainer/step-metrics.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import type { Rollout, RolloutGroup } from "../../src/rollout/types.js";

const char = new CharTokenizer();

function rollout(text: string, extra: Partial<Rollout> = {}): Rollout {
  const ids = char.encode(text);
  return {
    id: "1/0/0",
    task: "arithmetic",
    exampleId: "e",
    groupId: "1/0",
    promptIds: [1],
    completionIds: ids,
    samplerLogprobs: ids.map(() => -0.1),
    lossMask: ids.map(() => 1),
    text,
    finishReason: "stop",
    reward: 0.2,
    terms: { correct: 0 },
    advantage: -1,
    policyVersion: 0,
    ...extra,
  };
}

describe("credit after the first verified mistake", () => {
  it("char tokens: everything after `3+2=6` is masked, the mistake and what precedes it are trained", () => {
    const r = rollout("3+2=6,6+13=19 \\boxed{19}", { firstErrorEnd: 5 });
    const g: RolloutGroup = {
      id: "1/0",
      exampleId: "e",
      prompt: "p",
      rollouts: [r, rollout("3+2=5,5+13=18 \\boxed{18}")],
    };
    maskAfterFirstError([g], char);
    expect(r.lossMask.slice(0, 5)).toEqual([1, 1, 1, 1, 1]);
    expect(r.lossMask.slice(5).every((m) => m === 0)).toBe(true);
    expect(r.creditMasked).toBe(r.completionIds.length - 5);
    expect(g.rollouts[1]!.lossMask.every((m) => m === 1)).toBe(true); // no error reported: untouched
    expect(g.rollouts[1]!.creditMasked).toBeUndefined();
  });

  it("tokens already out of the loss (tool output) are not counted again; the metrics keep them apart", () => {
    const r = rollout("3+2=6,6+13=19", { firstErrorEnd: 5 });
    r.lossMask[7] = 0; // a tool token inside the masked tail
    r.lossMask[1] = 0; // and one before the mistake
    maskAfterFirstError([{ id: "g", exampleId: "e", prompt: "p", rollouts: [r] }], char);
    expect(r.creditMasked).toBe(13 - 5 - 1);
    const m = rewardMetrics([{ id: "g", exampleId: "e", prompt: "p", rollouts: [r] }], { terms: [] } as never);
    expect(m["credit/maskedTokensMean"]).toBe(7);
    expect(m["credit/firstErrorFrac"]).toBe(1);
    expect(m["length/toolTokensMean"]).toBe(2);
  });

  it("never masks the first token, even for an empty error span", () => {
    expect(firstTokenAfter(char.encode("abc"), char, 0)).toBe(1);
    expect(firstTokenAfter([], char, 0)).toBe(0);
    expect(firstTokenAfter(char.encode("abc"), char, 99)).toBe(3);
  });

  it("multi-character tokens (byte-level BPE): the boundary is the first token starting at or after the offset", () => {
    const tok = loadHfTokenizer(join(import.meta.dirname, "..", "fixtures", "parity", "llama", "tokenizer.json"));
    const text = "3+2=6,6+13=19 the end";
    const ids = tok.encode(text);
    const j = firstTokenAfter(ids, tok, 5);
    expect(tok.decode(ids.slice(0, j)).length).toBeGreaterThanOrEqual(5);
    expect(tok.decode(ids.slice(0, j - 1)).length).toBeLessThan(5);
  });

  it("is off by default, and a wrong value fails at load naming the field and the allowed values", () => {
    const base = {
      model: { type: "checkpoint", path: "/x" },
      task: { name: "arithmetic", options: { showWork: true } },
    };
    expect(resolveConfig(base).algorithm.loss.afterFirstError).toBe("train");
    expect(() => resolveConfig({ ...base, algorithm: { loss: { afterFirstError: "drop" } } })).toThrow(
      /algorithm\.loss\.afterFirstError[\s\S]*train[\s\S]*mask/,
    );
  });
});
