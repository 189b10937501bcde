import { describe, expect, it } from "vitest";
import { checkWorking, MAX_WORK_CHARS, workingStepsReward } from "../../src/rewards/working-steps.js";
import { rewards } from "../../src/rewards/index.js";

const gold = { steps: [5, 18] }; // "Pam has 3 cards, gets 2, gets 13. Now?" → 3+2=5,5+13=18
const score = (completion: string, g: unknown = gold) => rewards.score("working-steps", { completion, gold: g }, {});

describe("working-steps: values", () => {
  it("full credit for the gold working, and no error to localise", async () => {
    const r = await score("3+2=5,5+13=18 \\boxed{18}");
    expect(r.score).toBe(1);
    expect(r.firstErrorEnd).toBeUndefined();
    expect(r.terms).toEqual({ working: 1 });
  });

  it("a false first step: no credit, and the error ends after `3+2=6` (offset 5)", async () => {
    const r = await score("3+2=6,6+13=19 \\boxed{19}");
    expect(r.score).toBe(0);
    expect(r.firstErrorEnd).toBe(5);
    expect("3+2=6,6+13=19".slice(0, r.firstErrorEnd)).toBe("3+2=6");
    expect(r.info).toMatchObject({ right: 0, reason: "step 1: false" });
  });

  it("a false second step: half credit, error ends after `5+13=19` (offset 13)", async () => {
    const r = await score("3+2=5,5+13=19 \\boxed{19}");
    expect(r.score).toBe(0.5);
    expect(r.firstErrorEnd).toBe(13);
  });

  it("a wrong box after right working is not a working error (the box is the mistake, at the end)", async () => {
    const r = await score("3+2=5,5+13=18 \\boxed{17}");
    expect(r.score).toBe(1);
    expect(r.firstErrorEnd).toBeUndefined();
  });

  it("spaces around numbers and operators are allowed; the span ends at the last non-space character", async () => {
    expect(checkWorking(" 3 + 2 = 5 , 5+13=18 \\boxed{18}", gold.steps)).toEqual({ score: 1, right: 2 });
    expect(checkWorking("3 + 2 = 4  , 4+13=17", gold.steps).firstErrorEnd).toBe(9);
  });

  it("commutative and inverse forms of a right step count (value-checked, not text-matched)", () => {
    expect(checkWorking("2+3=5,13+5=18 \\boxed{18}", gold.steps).score).toBe(1);
    expect(checkWorking("10/2=5,5+13=18", gold.steps).score).toBe(1);
  });

  it("missing steps earn partial credit but localise nothing", () => {
    expect(checkWorking("3+2=5 \\boxed{18}", gold.steps)).toEqual({
      score: 0.5,
      right: 1,
      reason: "1 step(s) missing",
    });
    expect(checkWorking("\\boxed{18}", gold.steps)).toEqual({ score: 0, right: 0, reason: "2 step(s) missing" });
  });
});

describe("working-steps: adversarial completions earn nothing they should not", () => {
  it("true but irrelevant equations", () => {
    const r = checkWorking("1+1=2,2+2=4 \\boxed{18}", gold.steps);
    expect(r).toMatchObject({ score: 0, firstErrorEnd: 5, reason: "step 1: wrong intermediate result" });
  });

  it("a true second step that ignores the first result", () => {
    expect(checkWorking("3+2=5,4+14=18", gold.steps)).toMatchObject({
      score: 0.5,
      reason: "step 2: does not use the previous result",
    });
  });

  it("padding the working with extra steps after a full solution", () => {
    expect(checkWorking("3+2=5,5+13=18,18+0=18 \\boxed{18}", gold.steps)).toMatchObject({
      score: 1,
      firstErrorEnd: 21,
      reason: "step 3: more steps than the problem needs",
    });
  });

  it("prose, empty pieces and giant numbers are not equations", () => {
    expect(checkWorking("the answer is 18 \\boxed{18}", gold.steps)).toMatchObject({ score: 0, firstErrorEnd: 16 });
    expect(checkWorking(",3+2=5,5+13=18", gold.steps)).toMatchObject({ score: 0, firstErrorEnd: 1 }); // the separator
    expect(checkWorking("3+2=5,5+99999999999999999999=18", gold.steps)).toMatchObject({
      score: 0.5,
      reason: "step 2: not an equation a op b = c",
    });
  });

  it("inexact division and negative results are false", () => {
    expect(checkWorking("11/2=5,5+13=18", gold.steps)).toMatchObject({ score: 0, reason: "step 1: false" });
    expect(checkWorking("3-8=5,5+13=18", gold.steps)).toMatchObject({ score: 0, reason: "step 1: false" });
  });

  it("only the working before the first box, and within MAX_WORK_CHARS, is read (work bounded by input size)", () => {
    expect(checkWorking("3+2=5,5+13=18 \\boxed{18} 1+1=2,9*9=81", gold.steps).score).toBe(1);
    const r = checkWorking("3+2=5," + "1".repeat(1_000_000), gold.steps);
    expect(r).toMatchObject({ score: 0.5, reason: "step 2: not an equation a op b = c" });
    // The reader never looks past MAX_WORK_CHARS: whatever follows cannot change the result (nor cost time).
    const head = "3+2=5," + "1".repeat(MAX_WORK_CHARS);
    for (const tail of ["", ",5+13=18", "x".repeat(2_000_000), ",5+13=18 \\boxed{18}"]) {
      expect(checkWorking(head + tail, gold.steps)).toEqual(checkWorking(head.slice(0, MAX_WORK_CHARS), gold.steps));
    }
    // ...while inside the window the same text is read.
    expect(checkWorking("3+2=5,5+13=18", gold.steps).score).toBe(1);
  });

  it("a gold without steps is unscorable (null), never 0 or 1", async () => {
    for (const g of [null, {}, { steps: [] }, { steps: [1.5] }, { steps: [-1] }]) {
      const r = await score("3+2=5 \\boxed{5}", g);
      expect(r.score).toBeNull();
    }
  });

  it("the registry's gold completion earns full credit", async () => {
    const g = workingStepsReward.exampleGold!;
    expect((await score(workingStepsReward.goldCompletion!(g, {}), g)).score).toBe(1);
    const down = { steps: [9, 4] };
    expect((await score(workingStepsReward.goldCompletion!(down, {}), down)).score).toBe(1);
  });

  it("unknown options fail at load", async () => {
    await expect(rewards.score("working-steps", { completion: "", gold }, { strict: true })).rejects.toThrow(/strict/);
  });
});
