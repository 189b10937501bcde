/**
 * Split keys are canonical: a held-out question never has a commuted twin (`4+3` for `3+4`) in training. The
 * signature here is read back from the prompt text, independently of the task's own key function.
 */
import { describe, expect, it } from "vitest";
import { commutedKey, createArithmeticTask } from "../../src/tasks/arithmetic.js";
import { splitOf } from "../../src/tasks/generate.js";

/** ("+", 3, 4) for "… has 4 pens, gets 3. …": operands of + and * sorted, the rest as written. */
function signature(prompt: string): string {
  const forms: [RegExp, string][] = [
    [/has (\d+) \w+, gets (\d+)/, "+"],
    [/has (\d+) bags of (\d+)/, "*"],
    [/has (\d+) \w+, loses (\d+)/, "-"],
    [/splits (\d+) \w+ into (\d+)/, "/"],
  ];
  const hit = forms.map(([re, op]) => [re.exec(prompt), op] as const).find(([m]) => m !== null);
  if (!hit) throw new Error(`unparsed prompt: ${prompt}`);
  const [m, op] = hit;
  const [a, b] = [Number(m![1]), Number(m![2])];
  const first = op === "+" || op === "*" ? `${Math.min(a, b)}${op}${Math.max(a, b)}` : `${a}${op}${b}`;
  const second = /, (gets|loses) (\d+)\. Now\?/.exec(prompt);
  return second ? `(${first})${second[1] === "gets" ? "+" : "-"}${second[2]}` : first;
}

describe("canonical split keys", () => {
  it("commutedKey orders the operands", () => {
    expect(commutedKey(4, "+", 3)).toBe("3+4");
    expect(commutedKey(3, "+", 4)).toBe("3+4");
    expect(commutedKey(7, "*", 2)).toBe("2*7");
    expect(splitOf(commutedKey(9, "+", 5))).toBe(splitOf(commutedKey(5, "+", 9)));
  });

  it("no held-out arithmetic question has a commuted twin in the train split", () => {
    const task = createArithmeticTask({});
    const train = new Set(task.generate("train", 3000, 0).map((e) => signature(e.prompt)));
    const test = task.generate("test", 600, 0).map((e) => signature(e.prompt));
    const twins = test.filter((s) => train.has(s));
    expect(twins).toEqual([]);
    // The check can fail: commuted twins exist in the problem space (both orders are drawn).
    const all = task.generate("train", 3000, 0).map((e) => e.prompt);
    expect(all.some((p) => /has (\d+) \w+, gets (\d+)/.exec(p) && Number(RegExp.$1) > Number(RegExp.$2))).toBe(true);
    expect(all.some((p) => /has (\d+) \w+, gets (\d+)/.exec(p) && Number(RegExp.$1) < Number(RegExp.$2))).toBe(true);
  });
});
