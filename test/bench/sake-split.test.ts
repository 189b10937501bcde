/**
 * bench:sake's SFT half (bench/sake/settings.ts, `inSftHalf`): SFT learns the questions about one half of the train
 * drugs, by the name the question uses, and RL trains on all of them, so half of RL's prompts name drugs the start
 * was never asked about.
 */
import { describe, expect, it } from "vitest";
import { getTask } from "../../src/tasks/index.js";
import { inSftHalf, RL_TRAIN_EXAMPLES, taskOptions, TRAIN_EXAMPLES } from "../../bench/sake/settings.js";

const drugOf = (prompt: string) => prompt.split(" ")[2]!;

describe("bench:sake SFT half", () => {
  const task = getTask("sake", taskOptions(true));
  const sftPool = task.generate("train", TRAIN_EXAMPLES, 0);
  const rlPool = task.generate("train", RL_TRAIN_EXAMPLES, 0);

  it("splits by the drug the question names: every question about a name is on the same side", () => {
    const side = new Map<string, boolean>();
    for (const e of rlPool) {
      const drug = drugOf(e.prompt);
      const s = inSftHalf(e.prompt);
      expect(side.get(drug) ?? s, drug).toBe(s);
      side.set(drug, s);
    }
    const kept = [...side.values()].filter(Boolean).length;
    // Both halves hold a real share of the names (152 names; a fair coin keeps 76 ± 6.2).
    expect(kept).toBeGreaterThan(side.size * 0.3);
    expect(kept).toBeLessThan(side.size * 0.7);
  });

  it("keeps 984 of SFT's 2,000 questions, and leaves RL 4,160 of its 8,000 about names SFT never asked", () => {
    expect(sftPool.filter((e) => inSftHalf(e.prompt)).length).toBe(984);
    expect(rlPool.filter((e) => !inSftHalf(e.prompt)).length).toBe(4160);
  });

  it("refuses a prompt without a drug instead of guessing a side", () => {
    expect(() => inSftHalf("what is 2+2?")).toThrow(/no drug/);
  });
});
