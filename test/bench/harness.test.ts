/**
 * The shared effect-bench harness (bench/harness/): the within-group control keeps each group's rewards, the
 * baseline is the start's best decoding, the gate is per seed and comparative, the held-out halves are disjoint
 * and stable, and the source hash changes when the source does.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  benchLine,
  bestDecoding,
  comparativeGate,
  gainOverBest,
  heldOutExamples,
  heldOutHalf,
  countFromEnv,
  seedsFromEnv,
  shuffleWithinGroups,
  sourceHash,
  splitFromEnv,
  summarize,
  withinGroupControl,
} from "../../bench/harness/index.js";
import type { Rollout, RolloutGroup } from "../../src/rollout/types.js";
import { createArithmeticTask } from "../../src/tasks/arithmetic.js";
import { Rng } from "../../src/util/index.js";

const rollout = (i: number, reward: number | null, firstErrorEnd?: number): Rollout =>
  ({
    id: `r${i}`,
    reward,
    terms: { correct: reward ?? 0, tag: i },
    ...(firstErrorEnd !== undefined ? { firstErrorEnd } : {}),
  }) as unknown as Rollout;
const group = (rewards: (number | null)[], errs: (number | undefined)[] = []): RolloutGroup =>
  ({ rollouts: rewards.map((r, i) => rollout(i, r, errs[i])) }) as unknown as RolloutGroup;

describe("within-group control", () => {
  it("keeps every group's multiset of rewards, so uniform groups stay uniform", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.oneof(fc.constantFrom(0, 1, 0.5), fc.constant(null)), { minLength: 1, maxLength: 8 }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.nat(),
        (rewardLists, seed) => {
          const groups = rewardLists.map((rs) => group(rs));
          shuffleWithinGroups(groups, new Rng(seed));
          groups.forEach((g, i) => {
            const sorted = (xs: (number | null)[]) => [...xs].map(String).sort();
            expect(sorted(g.rollouts.map((r) => r.reward))).toEqual(sorted(rewardLists[i]!));
            // terms travel with their reward: the term "correct" always equals the reward it came with
            g.rollouts.forEach((r) => expect(r.terms.correct).toBe(r.reward ?? 0));
          });
        },
      ),
    );
  });

  it("really permutes, moves first-error positions with the rewards, and is seeded per step", () => {
    const make = () => [group([1, 0, 0, 1, 0, 1, 1, 0], [undefined, 3, 5, undefined, 7, undefined, undefined, 9])];
    const a = make(),
      b = make(),
      c = make();
    withinGroupControl(7)(a, 1);
    withinGroupControl(7)(b, 1);
    withinGroupControl(7)(c, 2);
    const tags = (g: RolloutGroup[]) => g[0]!.rollouts.map((r) => r.terms.tag);
    expect(tags(a)).toEqual(tags(b));
    expect(tags(a)).not.toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(tags(c)).not.toEqual(tags(a));
    // The reward given to slot i came from rollout tag t; its first-error position is rollout t's.
    const errs = [undefined, 3, 5, undefined, 7, undefined, undefined, 9];
    a[0]!.rollouts.forEach((r) => expect(r.firstErrorEnd).toBe(errs[r.terms.tag as number]));
  });
});

describe("best decoding", () => {
  it("takes the best start decoding and measures both arms there", () => {
    const start = { T0: 0.3, "T0.3": 0.28, "T0.6": 0.22, T1: 0.15 };
    const rl = { T0: 0.36, "T0.3": 0.37, "T0.6": 0.35, T1: 0.3 };
    expect(bestDecoding(start)).toEqual({ label: "T0", value: 0.3 });
    const g = gainOverBest(start, rl);
    expect(g.decoding).toBe("T0");
    expect(g.atStartBest).toBeCloseTo(0.06, 12); // not T1's 0.15 gain: a colder decoding gets most of that for free
    expect(g.bestVsBest).toBeCloseTo(0.07, 12);
  });
  it("breaks ties towards the colder decoding and rejects missing values", () => {
    expect(bestDecoding({ T0: 0.5, "T0.3": 0.5, "T0.6": 0.4, T1: 0.1 }).label).toBe("T0");
    expect(() => bestDecoding({ T0: 0.5, "T0.3": 0.5, "T0.6": Number.NaN, T1: 0.1 })).toThrow(/T0.6/);
  });
});

describe("comparative gate", () => {
  it("passes only when RL − control reaches the target on every seed", () => {
    const ok = comparativeGate(
      [
        { seed: 1, rl: 0.15, control: 0.02 },
        { seed: 2, rl: 0.12, control: -0.01 },
      ],
      0.1,
    );
    expect(ok.pass).toBe(true);
    expect(ok.margins.map((x) => +x.toFixed(6))).toEqual([0.13, 0.13]);
    const bad = comparativeGate(
      [
        { seed: 1, rl: 0.15, control: 0.02 },
        { seed: 2, rl: 0.12, control: 0.05 },
      ],
      0.1,
    );
    expect(bad).toMatchObject({ pass: false, failedSeeds: [2] });
  });
  it("a collapsing control cannot carry a weak RL arm: the margin is what counts, per seed", () => {
    // mean margin 0.2 but one seed at 0.05: fails
    const v = comparativeGate(
      [
        { seed: 1, rl: 0.05, control: 0 },
        { seed: 2, rl: 0.05, control: -0.3 },
      ],
      0.1,
    );
    expect(v).toMatchObject({ pass: false, failedSeeds: [1] });
  });
  it("with minGain, the RL arm's own gain must reach it too (a large margin over a collapsed control is not enough)", () => {
    const seeds = [
      { seed: 0, rl: 0.039, control: -0.25 },
      { seed: 1, rl: 0.12, control: 0.01 },
    ];
    expect(comparativeGate(seeds, 0.1)).toMatchObject({ pass: true, failedSeeds: [] });
    expect(comparativeGate(seeds, 0.1, { minGain: 0.1 })).toMatchObject({ pass: false, failedSeeds: [0] });
    expect(comparativeGate([{ seed: 2, rl: 0.1, control: 0 }], 0.1, { minGain: 0.1 }).pass).toBe(true);
  });
  it("names which of RL and more SFT gained more", () => {
    expect(comparativeGate([{ seed: 1, rl: 0.1, control: 0, sftMore: 0.12 }], 0).winnerVsSft).toBe("sft");
    expect(comparativeGate([{ seed: 1, rl: 0.1, control: 0, sftMore: 0.02 }], 0).winnerVsSft).toBe("rl");
    expect(comparativeGate([{ seed: 1, rl: 0.1, control: 0 }], 0).winnerVsSft).toBeNull();
  });
  it("summarize uses the sample standard deviation", () => {
    expect(summarize([1, 2, 3, 4])).toEqual({ mean: 2.5, std: Math.sqrt(5 / 3), min: 1, n: 4 });
    expect(summarize([7]).std).toBe(0);
  });
  it("bench lines carry the peer fields only with a peer", () => {
    expect(JSON.parse(benchLine("b", "m", 1.23456, "x"))).toEqual({
      bench: "b",
      metric: "m",
      value: 1.2346,
      unit: "x",
    });
    expect(JSON.parse(benchLine("b", "m", 3, "x", { name: "torch", value: 2 }))).toMatchObject({
      peer: "torch",
      peerValue: 2,
      ratio: 1.5,
    });
  });
});

describe("splits and seeds", () => {
  it("cuts the held-out split into disjoint, stable, roughly equal halves", () => {
    const task = createArithmeticTask({});
    const tune = heldOutExamples(task, "tune", 100).map((e) => e.prompt);
    const final = heldOutExamples(task, "final", 100).map((e) => e.prompt);
    expect(new Set(tune).size).toBe(100);
    expect(tune.filter((p) => final.includes(p))).toEqual([]);
    expect(heldOutExamples(task, "final", 100).map((e) => e.prompt)).toEqual(final);
    const train = new Set(task.generate("train", 2000, 0).map((e) => e.prompt));
    expect(final.filter((p) => train.has(p))).toEqual([]);
    const halves = Array.from({ length: 2000 }, (_, i) => heldOutHalf(`q${i}`));
    const tuneShare = halves.filter((h) => h === "tune").length / halves.length;
    expect(tuneShare).toBeGreaterThan(0.45);
    expect(tuneShare).toBeLessThan(0.55);
  });
  it("reads BENCH_SPLIT and BENCH_SEED_LIST strictly", () => {
    expect(splitFromEnv(undefined)).toBe("final");
    expect(splitFromEnv("tune")).toBe("tune");
    expect(() => splitFromEnv("test")).toThrow(/BENCH_SPLIT/);
    expect(seedsFromEnv(undefined, [100, 101])).toEqual([100, 101]);
    expect(seedsFromEnv("3, 4,5", [0])).toEqual([3, 4, 5]);
    for (const bad of ["", "a", "1,1", "-1", "1.5"]) {
      if (bad === "") expect(seedsFromEnv(bad, [9])).toEqual([9]);
      else expect(() => seedsFromEnv(bad, [0]), bad).toThrow(/BENCH_SEED_LIST/);
    }
  });
  it("reads a whole-number count from the environment, naming the variable when it is not one", () => {
    const name = "RLVR_TEST_COUNT_FROM_ENV";
    try {
      delete process.env[name];
      expect(countFromEnv(name, 60)).toBe(60);
      process.env[name] = " ";
      expect(countFromEnv(name, 60)).toBe(60);
      process.env[name] = "200";
      expect(countFromEnv(name, 60)).toBe(200);
      for (const bad of ["0", "-3", "1.5", "ten", "1e400"]) {
        process.env[name] = bad;
        expect(() => countFromEnv(name, 60), bad).toThrow(new RegExp(`${name}: a whole number`));
      }
    } finally {
      delete process.env[name];
    }
  });
  it("the source hash changes with a file's content and name", () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-srchash-"));
    writeFileSync(join(dir, "a.ts"), "export const a = 1;");
    const h1 = sourceHash(dir, ["a.ts"]);
    expect(sourceHash(dir, ["a.ts"])).toBe(h1);
    writeFileSync(join(dir, "a.ts"), "export const a = 2;");
    expect(sourceHash(dir, ["a.ts"])).not.toBe(h1);
    expect(sourceHash(dir, ["."])).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("rssFloors", () => {
  it("takes each quarter's lowest sample, so a sawtooth without a leak has flat floors", async () => {
    const { rssFloors } = await import("../../bench/harness/memory.js");
    // Garbage piles up 1 MB per 1,000 items and a major GC every 10,000 items drops it back to 100 MB.
    const saw = Array.from({ length: 41 }, (_, i) => ({ done: i * 1000, mb: 100 + (i % 10) }));
    expect(rssFloors(saw, 40_000)).toEqual([100, 100, 100, 100]);
    // A leak of 1 MB per 10,000 items under the same sawtooth: the floors rise by it.
    const leak = saw.map((s) => ({ ...s, mb: s.mb + s.done / 10_000 }));
    expect(rssFloors(leak, 40_000)).toEqual([100, 101, 102, 103]);
  });
});
