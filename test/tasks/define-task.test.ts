/**
 * `defineTask`: the shared tail of every task. A toy task pins what it adds (name, `generate` over `draw` with the
 * split rules, `score` as the weighted sum of the terms with the sampler's tokens passed through, a registry
 * definition that validates options); then every built-in task is checked to be built by it, and its scores to equal
 * the plain weighted sum of its terms (the behaviour the hand-written `score()` bodies had).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import "../../src/rewards/index.js"; // registers the built-in rewards the terms name
import { defineTask } from "../../src/tasks/index.js";
import { splitOf } from "../../src/tasks/generate.js";
import { scoreWithTerms } from "../../src/tasks/score.js";
import { TaskRegistry, getTask } from "../../src/tasks/index.js";
import type { RewardTerm } from "../../src/tasks/types.js";

const toyOptions = z.object({ max: z.number().int().min(1).max(1000).default(50) }).strict();
type ToyOptions = z.infer<typeof toyOptions>;
const TERMS: RewardTerm[] = [
  { name: "correct", reward: "math-answer", weight: 1 },
  { name: "overlong", reward: "overlong", weight: 0.5, options: { maxLen: 20, cache: 4 } },
];

const toy = defineTask<{ answer: string }, ToyOptions>({
  name: "toy-double",
  summary: "double a number",
  options: toyOptions,
  build: (o) => ({
    description: `double a number up to ${o.max}`,
    terms: TERMS,
    correctTerm: "correct",
    maxNewTokens: 8,
    draw(rng) {
      const x = rng.intBetween(0, o.max);
      const answer = String(2 * x);
      return { key: String(x), prompt: `2*${x}=`, gold: { answer }, goldCompletion: `\\boxed{${answer}}` };
    },
  }),
});

describe("defineTask on a toy task", () => {
  it("builds the task: name, options-specific description and the parts as given", () => {
    const t = toy.create({ max: 9 });
    expect(t.name).toBe("toy-double");
    expect(t.description).toBe("double a number up to 9");
    expect(t.terms).toBe(TERMS);
    expect([t.correctTerm, t.maxNewTokens, t.stop]).toEqual(["correct", 8, undefined]);
    expect(toy.create().description).toBe("double a number up to 50"); // schema default
  });

  it("generates through generateExamples: ids under the name, deterministic, keyed splits", () => {
    const t = toy.create({ max: 200 });
    const train = t.generate("train", 30, 7);
    expect(train.map((e) => e.id)).toEqual(Array.from({ length: 30 }, (_, i) => `toy-double/train/${i}`));
    expect(t.generate("train", 30, 7)).toEqual(train);
    const test = t.generate("test", 10, 7);
    for (const e of train) expect(splitOf(e.prompt.slice(2, -1))).toBe("train");
    for (const e of test) expect(splitOf(e.prompt.slice(2, -1))).toBe("test");
    expect(() => toy.create({ max: 1 }).generate("test", 5, 1)).toThrow(/toy-double: could only find/);
  });

  it("scores the weighted sum of its terms and passes the sampler's tokens through", async () => {
    const t = toy.create({ max: 9 });
    const e = t.generate("train", 1, 3)[0]!;
    // 18 tokens: overlong = (20 − 4 − 18)/4 = −0.5 (algorithms spec §11.5), so 1 + 0.5·(−0.5) = 0.75.
    const withTokens = await t.score(e, e.goldCompletion, new Array(18).fill(1));
    expect(withTokens.score).toBeCloseTo(0.75, 12);
    expect(withTokens.terms).toEqual({ correct: 1, overlong: -0.5 });
    // Without tokens the overlong term cannot be scored, and a weighted null term makes the whole score null.
    const without = await t.score(e, e.goldCompletion);
    expect(without.score).toBeNull();
    expect(without.terms).toEqual({ correct: 1 });
    const wrong = await t.score(e, "\\boxed{-1}", [1, 2]);
    expect(wrong.score).toBe(0);
  });

  it("gives a registry definition that validates options and builds the same task", () => {
    const reg = new TaskRegistry();
    reg.register(toy.definition);
    expect(reg.definition("toy-double").description).toBe("double a number");
    const viaRegistry = reg.get("toy-double", { max: 9 }).generate("train", 5, 1);
    expect(viaRegistry).toEqual(toy.create({ max: 9 }).generate("train", 5, 1));
    expect(() => reg.get("toy-double", { max: 0 })).toThrow(/task "toy-double" options: max/);
    expect(() => reg.get("toy-double", { other: 1 })).toThrow(/toy-double/);
    expect(() => toy.create({ max: 0 })).toThrow();
  });
});

describe("built-in tasks score as the weighted sum of their terms", () => {
  const cheap = ["addition", "arithmetic", "countdown", "linear-equation"];
  for (const name of cheap) {
    it(`${name}: gold and a wrong answer score as scoreWithTerms does`, async () => {
      const task = getTask(name, {});
      for (const e of task.generate("test", 4, 11)) {
        for (const completion of [e.goldCompletion, "\\boxed{nonsense}"]) {
          const tokens = [...completion].map((c) => c.charCodeAt(0));
          const input = { completion, gold: e.gold, prompt: e.prompt, tokens };
          expect(await task.score(e, completion, tokens)).toEqual(await scoreWithTerms(task.terms, input));
        }
      }
    });
  }
});
