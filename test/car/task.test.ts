/** The "mpc-car" task: prompts, splits, paraphrases, and gold completions that beat the defaults. */
import { describe, expect, it } from "vitest";
import { createMpcCarTask, goldParams, mpcCarOptions } from "../../src/tasks/mpc-car.js";
import { CAR_PARAPHRASES } from "../../src/tasks/mpc-car-paraphrases.js";
import { baselineRmse, parseCase, SIM_VERSION, type TrackName } from "../../src/rewards/car/index.js";
import { CAR_GOLD, GOLD_SIM_VERSION } from "../../src/tasks/mpc-car-gold.js";

const task = createMpcCarTask();

describe("mpc-car task", () => {
  it("has at least 20 distinct paraphrases per behaviour", () => {
    for (const [kind, list] of Object.entries(CAR_PARAPHRASES)) {
      expect(new Set(list).size, kind).toBeGreaterThanOrEqual(20);
      if (kind === "refVelocity") for (const p of list) expect(p).toContain("{v}");
    }
  });
  it("generates deterministically; train is on the circle, test on the F track, no prompt shared", () => {
    const a = task.generate("train", 50, 3);
    expect(task.generate("train", 50, 3)).toEqual(a);
    expect(task.generate("train", 50, 4)).not.toEqual(a);
    const test = task.generate("test", 50, 3);
    expect(a.every((e) => e.gold.track === "circle" && e.prompt.includes("circular"))).toBe(true);
    expect(test.every((e) => e.gold.track === "F" && e.prompt.includes("F-shaped"))).toBe(true);
    const trainPrompts = new Set(task.generate("train", 400, 0).map((e) => e.prompt));
    expect(task.generate("test", 400, 0).some((e) => trainPrompts.has(e.prompt))).toBe(false);
    expect(new Set(task.generate("train", 400, 0).map((e) => e.id)).size).toBe(400);
  });
  it("covers every behaviour and names every parameter in the prompt", () => {
    const ex = task.generate("train", 240, 1);
    const kinds = new Set(ex.map((e) => parseCase(e.gold.case)!.kind));
    expect([...kinds].sort()).toEqual(["centerline", "racingLine", "refVelocity", "reverse", "smooth"]);
    for (const name of [
      "qv",
      "qn",
      "qalpha",
      "qac",
      "qddelta",
      "alat_max",
      "a_min",
      "a_max",
      "v_min",
      "v_max",
      "track_safety_margin",
    ]) {
      expect(ex[0]!.prompt).toContain(`- ${name}:`);
    }
  });
  it("the committed baselines are what this simulator computes (else bump SIM_VERSION and rerun tune-car)", () => {
    expect(GOLD_SIM_VERSION).toBe(SIM_VERSION);
    for (const [caseText, tuned] of Object.entries(CAR_GOLD.circle))
      expect(baselineRmse(parseCase(caseText)!, "circle"), caseText).toBe(tuned.baseline);
  });
  it("rejects bad options and splits with errors naming the field", () => {
    expect(() => mpcCarOptions.parse({ trainTrack: "F", testTrack: "F" })).toThrow(/testTrack/);
    expect(() => task.generate("dev" as "train", 1, 0)).toThrow(/split/);
  });
  it.each(["centerline", "racingLine", "reverse", "refVelocity(1.5)", "smooth"])(
    "circle gold for %s: full format/extraction/names and beats the defaults",
    async (caseText) => {
      const c = parseCase(caseText)!;
      const ex = task.generate("train", 240, 0).find((e) => e.gold.case === caseText)!;
      expect(ex.goldCompletion).toContain(`"${Object.keys(goldParams(c, "circle"))[0]}"`);
      const r = await task.score(ex, ex.goldCompletion);
      expect(r.terms.format).toBe(1);
      expect(r.terms.extraction).toBe(1);
      expect(r.terms.names).toBe(1);
      expect(r.terms.improved).toBe(1);
      expect(r.terms.driving).toBeGreaterThan(0.3);
      expect(r.score).toBeCloseTo(3 + r.terms.driving!, 12);
    },
  );
  it.each(["smooth"])("F gold for %s beats the defaults", async (caseText) => {
    const ex = task.generate("test", 240, 0).find((e) => e.gold.case === caseText)!;
    expect(ex.gold.track as TrackName).toBe("F");
    const r = await task.score(ex, ex.goldCompletion);
    expect(r.terms.improved).toBe(1);
  });
});
