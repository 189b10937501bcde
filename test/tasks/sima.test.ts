/**
 * The "sima" task and the "grid-world" environment: seeded generation with held-out layouts and held-out
 * compositions, gold trajectories whose observations are exactly what the environment answers, the gold earning
 * full reward through the task's scorer, and a random policy's episodes through the real episode loop ending by the
 * rules with counted errors and reward 0, never a crash.
 */
import { describe, expect, it } from "vitest";
import { Rng } from "../../src/util/index.js";
import { createModel } from "../../src/models/registry.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import "../../src/rewards/index.js";
import { getTask } from "../../src/tasks/index.js";
import { createSimaTask, type SimaGold } from "../../src/tasks/sima.js";
import { drawTask, layoutKey } from "../../src/tasks/world-gen.js";
import { getEnvironment } from "../../src/envs/index.js";
import { sampleGroups, scoreGroups } from "../../src/rollout/groups.js";
import { GOAL_KINDS, replay, solve, type WorldState } from "../../src/rewards/world/index.js";
import type { Example } from "../../src/tasks/types.js";

const task = createSimaTask();
const train = task.generate("train", 120, 0);
const test = task.generate("test", 60, 0);

/** Every model turn's text, without the newline that ends it. */
const turnsOf = (e: Example<SimaGold>) => e.goldSegments!.filter((s) => s.kind === "model").map((s) => s.text);

describe("sima: generation", () => {
  it("is deterministic and registered", () => {
    expect(task.generate("train", 5, 0)).toEqual(train.slice(0, 5));
    expect(task.generate("train", 5, 1)).not.toEqual(train.slice(0, 5));
    expect(getTask("sima").name).toBe("sima");
  });

  it("keeps layouts apart: no test layout appears in training", () => {
    const trainLayouts = new Set(train.map((e) => layoutKey(e.gold.world)));
    for (const e of test) expect(trainLayouts.has(layoutKey(e.gold.world))).toBe(false);
  });

  it("holds out whole compositions: never in training, present in the test split", () => {
    for (const e of train) expect(["place:ball", "answer:colour"]).not.toContain(e.gold.composition);
    const heldOut = test.filter((e) => e.gold.heldOutComposition).map((e) => e.gold.composition);
    expect(new Set(heldOut)).toEqual(new Set(["place:ball", "answer:colour"]));
    expect(new Set(train.map((e) => e.gold.goal.kind))).toEqual(new Set(GOAL_KINDS));
  });

  it("keeps only tasks the solver finishes within the step limit, not already done at the start", () => {
    for (const e of [...train, ...test]) {
      const sol = solve(e.gold.world, e.gold.goal, e.gold.rules.maxSteps);
      expect(sol).not.toBeNull();
      expect(sol!.length).toBeGreaterThanOrEqual(1);
      expect(turnsOf(e).length).toBe(sol!.length);
    }
  });

  it("draws only worlds whose object names are unique and whose locked doors have their key", () => {
    const rng = new Rng(7);
    for (let i = 0; i < 200; i++) {
      const t = drawTask(rng, {
        maxRooms: 6,
        closedShare: 0.3,
        lockedShare: 0.4,
        extraObjects: 4,
        maxSteps: 12,
        minSteps: 1,
        kinds: GOAL_KINDS,
      });
      if (!t) continue;
      const w: WorldState = t.world;
      const names = w.objects.map((o) => o.name);
      expect(new Set(names).size).toBe(names.length);
      for (const d of w.doors) if (d.state === "locked") expect(names).toContain(`${d.lock} key`);
      expect(w.doors.length).toBeGreaterThanOrEqual(w.rooms.length - 1); // a spanning tree at least
    }
  });

  it("fails with a clear error when the settings hold too few tasks", () => {
    // Placing takes at least two commands (take, put), so one step allows no task at all.
    const none = createSimaTask({ kinds: ["place"], maxSteps: 1 });
    expect(() => none.generate("train", 5, 0)).toThrow(/sima: found 0 of 5 train tasks \(no new one in 500 draws\)/);
  });
});

describe("sima: gold trajectories and the grid-world environment", () => {
  it("the prompt is the instruction and the first observation; gold segments alternate command and observation", () => {
    const e = train[0]!;
    expect(e.prompt).toMatch(/^task: .+\n@\w+ hold:none\nsee: .+\nexits: .+\n> $/);
    expect(e.goldSegments!.map((s) => s.text).join("")).toBe(e.goldCompletion);
    e.goldSegments!.forEach((s, i) => expect(s.kind).toBe(i % 2 === 0 ? "model" : "inserted"));
    expect(e.goldSegments!.at(-1)!.kind).toBe("model"); // the last command ends the episode: nothing after it
  });

  it("the environment answers each gold command with the gold's next observation, then ends", async () => {
    const env = getEnvironment("grid-world", { maxSteps: 12 });
    for (const e of train.slice(0, 40)) {
      const ep = env.start(e);
      const segs = e.goldSegments!;
      for (let i = 0; i < segs.length; i += 2) {
        const reply = await ep.step(segs[i]!.text, { turn: i / 2 + 1, end: "stop" });
        if (i + 1 < segs.length) expect(reply).toEqual({ kind: "observation", text: segs[i + 1]!.text });
        else expect(reply).toEqual({ kind: "end" });
      }
    }
  });

  it("the gold earns 1 through the task scorer, from its turns or its transcript; doing nothing earns 0", async () => {
    for (const e of [...train.slice(0, 30), ...test.slice(0, 30)]) {
      expect((await task.score(e, e.goldCompletion, undefined, turnsOf(e))).terms.success).toBe(1);
      expect((await task.score(e, e.goldCompletion)).score).toBe(1);
      expect((await task.score(e, "done\n", undefined, ["done\n"])).score).toBe(0);
    }
  });

  it("counts invalid commands and a repeated no-op as errors and ends those episodes", async () => {
    const env = getEnvironment("grid-world");
    const e = train.find((x) => x.gold.goal.kind !== "answer")!;
    const ep = env.start(e);
    const info = { turn: 1, end: "stop" as const };
    const first = await ep.step("fly away\n", info);
    expect(first).toMatchObject({ kind: "observation", error: 'invalid: unknown command "fly"' });
    expect((first as { text: string }).text.startsWith('invalid: unknown command "fly"\n@')).toBe(true);
    await ep.step("x\n", info);
    expect(await ep.step("y\n", info)).toEqual({ kind: "end", error: 'invalid: unknown command "y"' });
    const ep2 = env.start(e);
    await ep2.step("look\n", info);
    expect(await ep2.step("look\n", info)).toEqual({ kind: "end", error: "stuck: a no-op right after a no-op" });
    expect(() => env.start({ ...e, gold: { nope: 1 } as never })).toThrow(/not a world task/);
  });

  it("a random policy's episodes run through the episode loop, end by the rules and score 0 with counted errors", async () => {
    const model = createModel("micro-char", new Rng(1)).model.eval();
    const examples = train.slice(0, 3);
    const groups = await sampleGroups(model, new CharTokenizer(), task, examples, {
      groupSize: 2,
      maxNewTokens: 120,
      temperature: 1,
      rng: new Rng(2),
      policyVersion: 0,
      idPrefix: "1",
    });
    await scoreGroups(task, new Map(examples.map((e) => [e.id, e])), groups);
    for (const r of groups.flatMap((g) => g.rollouts)) {
      expect(r.episode?.env).toBe("grid-world");
      expect(r.reward).toBe(0);
      expect(r.episode!.errors.length > 0 || r.episode!.truncated !== undefined).toBe(true);
      // The verdict is the replay of exactly the recorded model turns.
      const ex = examples.find((x) => x.id === r.exampleId)!;
      const turns = r.segments!.filter((s) => s.kind === "model").map((s) => s.text);
      expect(replay(ex.gold.world, ex.gold.goal, ex.gold.rules, turns).success).toBe(false);
    }
  });
});
