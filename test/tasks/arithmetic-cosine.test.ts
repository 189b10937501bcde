/**
 * The arithmetic task's `cosineMaxLen` option (Open-RS, recipes/open-rs.yaml): `cosine-length` carries the
 * correctness at weight 1 and plain correctness stays at weight 0, so pass@1 and the trainer's correct/wrong length
 * split still read it. Scores are checked against the cosine formula by hand.
 */
import { describe, expect, it } from "vitest";
import "../../src/rewards/index.js";
import { getTask } from "../../src/tasks/index.js";

/** Open-RS's cosine for length L of maxLen 40: correct 0.5 + 0.25(1 + cos(πL/40)), wrong −0.5 − 0.25(1 + cos). */
const cos40 = (len: number, correct: boolean) => {
  const c = 1 + Math.cos((Math.PI * len) / 40);
  return correct ? 0.5 + 0.25 * c : -0.5 - 0.25 * c;
};
const ids = (s: string) => Array.from(s, () => 7);

describe("arithmetic with cosineMaxLen", () => {
  const task = getTask("arithmetic", { showWork: true, workShare: 0.5, cosineMaxLen: 40 });
  const plain = getTask("arithmetic", { showWork: true, workShare: 0.5 });
  const [ex] = task.generate("train", 1, 0);

  it("has correct at weight 0, cosine at weight 1, and the same examples as the plain task", () => {
    expect(task.terms.map((t) => [t.name, t.weight])).toEqual([
      ["correct", 0],
      ["cosine", 1],
      ["format", 0.2],
      ["working", 0],
    ]);
    expect(task.correctTerm).toBe("correct");
    expect(task.generate("train", 20, 0)).toEqual(plain.generate("train", 20, 0));
    expect(task.description).toMatch(/cosine length-scaled correctness \(maxLen 40\)/);
  });

  it("scores a right answer by its token length: shorter earns more", async () => {
    const box = `\\boxed{${ex!.gold.answer}}`;
    const long = `1+1=2,2+2=4,4+4=8 ${box}`;
    const short = await task.score(ex!, box, ids(box));
    const longer = await task.score(ex!, long, ids(long));
    expect(short.terms.correct).toBe(1);
    expect(short.terms.cosine).toBeCloseTo(cos40(box.length, true), 12);
    expect(short.score).toBeCloseTo(cos40(box.length, true) + 0.2, 12);
    expect(longer.terms.cosine).toBeCloseTo(cos40(long.length, true), 12);
    expect(longer.score!).toBeLessThan(short.score!);
  });

  it("scores a wrong answer by its length: longer is punished less; the plain task gives both 0.2", async () => {
    const wrong = "\\boxed{999}";
    const rambling = `9+9=18,18+9=27 ${wrong}`;
    const a = await task.score(ex!, wrong, ids(wrong));
    const b = await task.score(ex!, rambling, ids(rambling));
    expect(a.terms.correct).toBe(0);
    expect(a.score).toBeCloseTo(cos40(wrong.length, false) + 0.2, 12);
    expect(b.score).toBeCloseTo(cos40(rambling.length, false) + 0.2, 12);
    expect(b.score!).toBeGreaterThan(a.score!);
    expect((await plain.score(ex!, wrong, ids(wrong))).score).toBeCloseTo(0.2, 12);
  });

  it("counts tokens, not characters, and is unscorable without the sampler's tokens", async () => {
    const box = `\\boxed{${ex!.gold.answer}}`;
    expect((await task.score(ex!, box, [1, 2])).terms.cosine).toBeCloseTo(cos40(2, true), 12);
    expect((await task.score(ex!, box)).score).toBeNull();
  });

  it("rejects a non-positive or fractional cosineMaxLen", () => {
    expect(() => getTask("arithmetic", { cosineMaxLen: 0 })).toThrow(/cosineMaxLen/);
    expect(() => getTask("arithmetic", { cosineMaxLen: 2.5 })).toThrow(/cosineMaxLen/);
  });
});
