/**
 * The short prompt forms for small models: `matmul-kernel` with `prompt: "short"` asks with the shape alone, and
 * `optimisation` with `prompt: "question"` gives the word problem without the format instructions. Either way the
 * problems, their split, their gold and their gold completion are those of the full form; only the prompt text changes.
 */
import { describe, expect, it } from "vitest";
import { createMatmulKernelTask } from "../../src/tasks/matmul-kernel.js";
import { createOptimisationTask, OPTIMISATION_INSTRUCTIONS } from "../../src/tasks/optimisation.js";

describe("short prompt forms", () => {
  it('matmul-kernel prompt "short" is the language and shape, same problems and gold as "full"', () => {
    const full = createMatmulKernelTask().generate("train", 8, 3);
    const short = createMatmulKernelTask({ prompt: "short" }).generate("train", 8, 3);
    expect(short.map((e) => e.gold)).toEqual(full.map((e) => e.gold));
    expect(short.map((e) => e.goldCompletion)).toEqual(full.map((e) => e.goldCompletion));
    const g = short[0]!.gold;
    expect(short[0]!.prompt).toBe(`js matmul m=${g.m} n=${g.n} k=${g.k}\n`);
    expect(full[0]!.prompt).toContain(`m=${g.m}, n=${g.n}, k=${g.k}`);
    expect(createMatmulKernelTask({ prompt: "short", language: "wat" }).generate("test", 1, 0)[0]!.prompt).toMatch(
      /^wat matmul m=\d+ n=\d+ k=\d+\n$/,
    );
  });

  it('optimisation prompt "question" drops the instructions and keeps the problem, split and gold', () => {
    const full = createOptimisationTask({ families: ["knapsack"] }).generate("test", 3, 0);
    const q = createOptimisationTask({ families: ["knapsack"], prompt: "question" }).generate("test", 3, 0);
    expect(q.map((e) => e.gold)).toEqual(full.map((e) => e.gold));
    expect(q.map((e) => e.goldCompletion)).toEqual(full.map((e) => e.goldCompletion));
    for (const [i, e] of q.entries()) {
      expect(e.prompt).not.toContain("Answer in three parts");
      expect(full[i]!.prompt).toBe(`${e.prompt}\n${OPTIMISATION_INSTRUCTIONS}`);
    }
  });

  it("rejects an unknown prompt form", () => {
    expect(() => createMatmulKernelTask({ prompt: "tiny" as "short" })).toThrow(/prompt/);
    expect(() => createOptimisationTask({ prompt: "short" as "question" })).toThrow(/prompt/);
  });
});
