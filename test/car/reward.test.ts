/**
 * The car rewards end to end (rewards spec §11): defaults score exactly 0, tuned gold improves, the simulation is
 * bit-identical across runs, and every adversarial case of §11.5 earns what the spec says.
 */
import { describe, expect, it } from "vitest";
import { rewards } from "../../src/rewards/registry.js";
import { carCompletion, carRewardOptions, drivingTerm, type CarGold } from "../../src/rewards/car/reward.js";
import { DEFAULT_PARAMS } from "../../src/rewards/car/mpc.js";
import { getTrack } from "../../src/rewards/car/track.js";
import { runLap } from "../../src/rewards/car/simulate.js";
import { baselineRmse } from "../../src/rewards/car/evaluate.js";
import { parseCase } from "../../src/rewards/car/behaviours.js";
import { goldParams } from "../../src/tasks/mpc-car.js";

const opts = carRewardOptions.parse({});
const circle = (c: string): CarGold => ({ case: c, track: "circle" });
const drive = (completion: string, gold: CarGold = circle("racingLine"), o = opts) =>
  drivingTerm(completion, gold, o).score;
const dict = (text: string) => `<reasoning>r</reasoning><answer>new_mpc_params = ${text}</answer>`;
const score = async (name: string, completion: string, gold: CarGold = circle("racingLine"), options = {}) =>
  (await rewards.score(name, { completion, gold }, options)).score;

describe("driving term", () => {
  it("the default parameters, given explicitly, score an improvement of exactly 0", () => {
    expect(drive(carCompletion("defaults", { ...DEFAULT_PARAMS }))).toBe(0);
  });
  it("§11.5 #4: {} drives the defaults (0) and earns no name credit", async () => {
    expect(drive(dict("{}"))).toBe(0);
    expect(await score("mpc-car-names", dict("{}"))).toBe(0);
    expect(await score("mpc-car-extraction", dict("{}"))).toBe(1);
  });
  it("§11.5 #2: {q, a} reaches nothing: names 0, driving 0", async () => {
    expect(drive(dict('{"q": 1, "a": 2}'))).toBe(0);
    expect(await score("mpc-car-names", dict('{"q": 1, "a": 2}'))).toBe(0);
  });
  it("the tuned racing-line gold improves the racing-line RMSE on the circle", () => {
    const r = drivingTerm(
      carCompletion("tight", goldParams({ kind: "racingLine" }, "circle")),
      circle("racingLine"),
      opts,
    );
    expect(r.score).toBeGreaterThan(0.3);
    expect((r.info as { rmse: number }).rmse).toBeLessThan((r.info as { baseline: number }).baseline);
  });
  it("the simulation is bit-identical across runs", () => {
    const t = getTrack("circle");
    const cfg = { settleTime: 1, samples: 200 };
    const a = runLap(t, { ...DEFAULT_PARAMS, qn: 55 }, cfg);
    const b = runLap(t, { ...DEFAULT_PARAMS, qn: 55 }, cfg);
    expect(Array.from(a.trajectory.n)).toEqual(Array.from(b.trajectory.n));
    expect(Array.from(a.trajectory.vs)).toEqual(Array.from(b.trajectory.vs));
    expect(a.qpIterations).toBe(b.qpIterations);
  });
  it.each([
    ["§11.5 #1 prose only", "<reasoning>r</reasoning><answer>raise qn a bit</answer>"],
    ["§11.5 #3 huge a_max", dict('{"a_max": 1e9}')],
    ["§11.5 #3 huge v_max", dict('{"v_max": 1e6}')],
    ["§11.5 #3 NaN", dict('{"qn": NaN}')],
    ["§11.5 #3 string", dict('{"qv": "fast"}')],
    ["§11.5 #5 duplicate", dict('{"qv": 5, "q_v": 9}')],
    ["§11.5 #6 dict in reasoning only", '<reasoning>new_mpc_params = {"qn": 50}</reasoning><answer>done</answer>'],
    ["v_min above v_max", dict('{"v_min": 4, "v_max": 3}')],
    ["code instead of a dict", dict('__import__("os").system("true")')],
  ])("%s → driving −4", (_label, completion) => {
    expect(drive(completion)).toBe(-4);
  });
  it("§11.5 #7: parameters that crash the car score −4, crash found after settling too", () => {
    const r = drivingTerm(dict('{"alat_max": 1, "a_max": 0.5, "a_min": -0.5, "qac": 1}'), circle("racingLine"), opts);
    expect(r.score).toBe(-4);
    expect(String(r.info?.reason)).toMatch(/crash \(wall\)/);
  });
  it("parking or crawling on the racing line is a stall, not a perfect score", () => {
    const r = drivingTerm(dict('{"v_min": 0, "v_max": 0.5}'), circle("racingLine"), opts);
    expect(r.score).toBe(-4);
    expect(String(r.info?.reason)).toMatch(/stalled/);
  });
  it("standing still is not reversing: a stall", () => {
    const r = drivingTerm(dict('{"v_min": 0, "v_max": 0, "qv": 0}'), circle("reverse"), opts);
    expect(r.score).toBe(-4);
    expect(String(r.info?.reason)).toMatch(/stalled/);
  });
  it("clamp mode drives out-of-range values at the bound instead of rejecting", () => {
    const v = drive(dict('{"a_max": 1e9}'), circle("racingLine"), carRewardOptions.parse({ outOfRange: "clamp" }));
    expect(v).not.toBe(-4);
    expect(Number.isFinite(v)).toBe(true);
  });
  it("crashRmse (reference parity) maps a failure through the baseline: (b − 69)/b", () => {
    const b = baselineRmse(parseCase("reverse")!, "circle")!;
    const v = drive("no answer", circle("reverse"), carRewardOptions.parse({ crashRmse: 69, clip: [-100, 4] }));
    expect(v).toBeCloseTo((b - 69) / b, 12);
    expect(drive("no answer", circle("reverse"), carRewardOptions.parse({ preset: "robotxR1" }))).toBe(-4);
  });
  it("an unreadable gold scores null (G2)", async () => {
    expect(drive(dict("{}"), { case: "fly", track: "circle" })).toBeNull();
    expect(drive(dict("{}"), { case: "racingLine", track: "moon" as "F" })).toBeNull();
    expect(await score("mpc-car-driving", dict("{}"), { case: "refVelocity(99)", track: "circle" })).toBeNull();
  });
  it("the worker-pool run (the registry default) gives the same score as the in-process run", async () => {
    const completion = carCompletion("tight", goldParams({ kind: "racingLine" }, "circle"));
    const inProcess = drivingTerm(completion, circle("racingLine"), opts).score;
    expect(await score("mpc-car-driving", completion)).toBe(inProcess);
    expect(await score("mpc-car-driving", "no answer", circle("reverse"), { crashRmse: 69, clip: [-100, 4] })).toBe(
      drivingTerm("no answer", circle("reverse"), carRewardOptions.parse({ crashRmse: 69, clip: [-100, 4] })).score,
    );
  });
  it("a stale cached baseline from another simulator version is recomputed", () => {
    expect(drive(dict("{}"), { case: "racingLine", track: "circle", baselineRmse: 123, simVersion: "old" })).toBe(0);
  });
});

describe("format, extraction, names, improved", () => {
  it("format is the mean over reasoning and answer of exactly one open and one close tag", async () => {
    expect(await score("mpc-car-format", dict("{}"))).toBe(1);
    expect(await score("mpc-car-format", "<answer>x</answer>")).toBe(0.5);
    expect(
      await score(
        "mpc-car-format",
        "<reasoning>a</reasoning><reasoning>b</reasoning><answer>x</answer><answer>y</answer>",
      ),
    ).toBe(0);
  });
  it("names: aliases earn half; the robotxR1 preset restores substring credit and names = 1 for {}", async () => {
    expect(await score("mpc-car-names", dict('{"q_n": 50, "qalpha": 3}'))).toBe(0.75);
    expect(await score("mpc-car-names", dict('{"q": 1, "a": 2}'), circle("racingLine"), { preset: "robotxR1" })).toBe(
      0.5,
    );
    expect(await score("mpc-car-names", dict("{}"), circle("racingLine"), { preset: "robotxR1" })).toBe(1);
  });
  it("improved is 1 only when the parameters beat the defaults", async () => {
    expect(await score("mpc-car-improved", carCompletion("t", goldParams({ kind: "racingLine" }, "circle")))).toBe(1);
    expect(await score("mpc-car-improved", dict("{}"))).toBe(0);
    expect(await score("mpc-car-improved", "garbage")).toBe(0);
  });
});
