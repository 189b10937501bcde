/**
 * The room world of SIMA 2 (src/rewards/world/): commands, observations, goals, the episode rules, the solver and
 * the "world-goal" reward, on one hand-built world whose answers are worked out by hand:
 *
 *   red (0) ── closed ── blue (1)
 *     │
 *   locked by the yellow key
 *     │
 *   green (2)
 *
 * red holds the yellow key; blue holds a white ball and a closed purple box; green holds a white key.
 */
import { describe, expect, it } from "vitest";
import {
  WorldEpisode,
  applyCommand,
  goalMet,
  instruction,
  observe,
  parseCommand,
  replay,
  solve,
  transcriptCommands,
  truth,
  validCommands,
  worldGoalReward,
  type Goal,
  type WorldGold,
  type WorldState,
} from "../../src/rewards/world/index.js";
import { rewards } from "../../src/rewards/text-rewards.js";

function world(): WorldState {
  return {
    cols: 2,
    rows: 2,
    rooms: ["red", "blue", "green", "yellow"],
    doors: [
      { a: 0, b: 1, state: "closed" },
      { a: 0, b: 2, state: "locked", lock: "yellow" },
    ],
    objects: [
      { name: "yellow key", kind: "key", colour: "yellow", at: { room: 0 } },
      { name: "white ball", kind: "ball", colour: "white", at: { room: 1 } },
      { name: "purple box", kind: "box", colour: "purple", at: { room: 1 }, open: false },
      { name: "white key", kind: "key", colour: "white", at: { room: 2 } },
    ],
    agent: 0,
  };
}
const RULES = { maxSteps: 10, maxInvalid: 3 };

/** Applies command texts in order; throws on an invalid one. */
function run(w: WorldState, ...cmds: string[]): WorldState {
  for (const t of cmds) {
    const c = parseCommand(t);
    if ("error" in c) throw new Error(c.error);
    const out = applyCommand(w, c);
    if (out.invalid) throw new Error(`${t}: ${out.invalid}`);
    w = out.state;
  }
  return w;
}

describe("commands", () => {
  it("parses every verb, ignoring case and extra spaces", () => {
    expect(parseCommand("  GO   east ")).toEqual({ verb: "go", dir: "east" });
    expect(parseCommand("open south")).toEqual({ verb: "open-door", dir: "south" });
    expect(parseCommand("open purple box")).toEqual({ verb: "open-box", box: "purple box" });
    expect(parseCommand("take white ball")).toEqual({ verb: "take", object: "white ball" });
    expect(parseCommand("put purple box")).toEqual({ verb: "put", box: "purple box" });
    expect(parseCommand("answer two keys")).toEqual({ verb: "answer", text: "two keys" });
    for (const t of ["drop", "look", "done"]) expect(parseCommand(t)).toEqual({ verb: t });
  });

  it("rejects what is not a command, with the reason", () => {
    expect(parseCommand("")).toEqual({ error: "empty command" });
    expect(parseCommand("fly north")).toEqual({ error: 'unknown command "fly"' });
    expect(parseCommand("go up")).toHaveProperty("error");
    expect(parseCommand("take the ball")).toHaveProperty("error");
    expect(parseCommand("open purple ball")).toHaveProperty("error");
    expect(parseCommand("answer")).toHaveProperty("error");
    expect(parseCommand(`answer ${"9".repeat(100)}`)).toEqual({ error: "command longer than 80 characters" });
  });

  it("applies doors, keys, boxes and the hand by the rules, never changing the input state", () => {
    const w = world();
    const before = JSON.stringify(w);
    expect(applyCommand(w, { verb: "go", dir: "east" }).invalid).toBe("the east door is closed");
    expect(applyCommand(w, { verb: "go", dir: "west" }).invalid).toBe("no door west");
    expect(applyCommand(w, { verb: "open-door", dir: "south" }).invalid).toMatch(/locked; it needs the yellow key/);
    const open = run(w, "open east", "go east");
    expect(open.agent).toBe(1);
    expect(applyCommand(open, { verb: "put", box: "purple box" }).invalid).toBe("nothing in hand");
    const held = run(open, "take white ball");
    expect(applyCommand(held, { verb: "put", box: "purple box" }).invalid).toBe("the purple box is closed");
    expect(applyCommand(held, { verb: "take", object: "purple box" }).invalid).toMatch(/hands full/);
    const boxed = run(held, "open purple box", "put purple box");
    expect(boxed.objects[1]!.at).toEqual({ box: "purple box" });
    expect(
      applyCommand(run(boxed, "go west", "take yellow key", "go east"), { verb: "put", box: "purple box" }).invalid,
    ).toBe("the purple box is full");
    const south = run(w, "take yellow key", "open south", "go south");
    expect(south.agent).toBe(2);
    expect(applyCommand(south, { verb: "take", object: "white key" }).invalid).toMatch(/hands full/);
    expect(run(south, "drop", "take white key").objects.find((o) => o.name === "yellow key")!.at).toEqual({ room: 2 });
    expect(JSON.stringify(w)).toBe(before);
  });

  it("lists exactly the commands that apply", () => {
    const names = validCommands(world()).map((c) => JSON.stringify(c));
    expect(names).toEqual([
      JSON.stringify({ verb: "open-door", dir: "east" }),
      JSON.stringify({ verb: "take", object: "yellow key" }),
    ]);
  });
});

describe("observations", () => {
  it("render the room, the hand, boxes (contents only when open) and the exits", () => {
    expect(observe(world())).toBe(
      "@red hold:none\nsee: yellow key\nexits: south green locked-yellow, east blue closed\n",
    );
    const w = run(world(), "open east", "go east", "take white ball", "open purple box", "put purple box");
    expect(observe(w)).toBe("@blue hold:none\nsee: purple box(open: white ball)\nexits: west red open\n");
    expect(observe(run(world(), "take yellow key"))).toBe(
      "@red hold:yellow key\nsee: nothing\nexits: south green locked-yellow, east blue closed\n",
    );
  });
});

describe("goals and verifiers", () => {
  const goals: [Goal, string, string[]][] = [
    [{ kind: "reach", room: "blue" }, "go to the blue room", ["open east", "go east"]],
    [{ kind: "fetch", object: "white ball" }, "pick up the white ball", ["open east", "go east", "take white ball"]],
    [{ kind: "open", box: "purple box" }, "open the purple box", ["open east", "go east", "open purple box"]],
    [
      { kind: "open", door: ["red", "green"] },
      "open the door between red and green",
      ["take yellow key", "open south"],
    ],
    [
      { kind: "place", object: "white ball", box: "purple box" },
      "put the white ball in the purple box",
      ["open east", "go east", "take white ball", "open purple box", "put purple box"],
    ],
  ];
  it.each(goals)("%j: instruction, false at the start, true after the hand-found shortest solution", (g, text, sol) => {
    expect(instruction(g)).toBe(text);
    expect(goalMet(world(), g)).toBe(false);
    expect(goalMet(run(world(), ...sol), g)).toBe(true);
    expect(solve(world(), g, 10)).toEqual(sol);
    expect(solve(world(), g, sol.length - 1)).toBeNull();
  });

  it("answers questions from the end state: counts as digits or words, colours of the only object", () => {
    const count: Goal = { kind: "answer", question: { ask: "count", what: "key", room: "red" } };
    expect(instruction(count)).toBe("how many keys are on the red room's floor?");
    expect(truth(world(), count.question)).toBe("1");
    for (const a of ["1", "one", " One. "]) expect(goalMet(world(), count, a)).toBe(true);
    expect(goalMet(world(), count, "2")).toBe(false);
    expect(goalMet(world(), count)).toBe(false);
    expect(goalMet(run(world(), "take yellow key"), count, "0")).toBe(true); // the end state decides
    const colour: Goal = { kind: "answer", question: { ask: "colour", what: "ball", room: "blue" } };
    expect(goalMet(world(), colour, "white")).toBe(true);
    expect(truth(world(), { ask: "colour", what: "ball", room: "red" })).toBeNull(); // no ball there: no truth
    // The solver walks into the asked room before answering.
    expect(solve(world(), colour, 10)).toEqual(["open east", "go east", "answer white"]);
    expect(solve(world(), count, 10)).toEqual(["answer 1"]);
  });

  it("returns null for a goal that no command list reaches", () => {
    expect(solve(world(), { kind: "reach", room: "yellow" }, 30)).toBeNull(); // no door into yellow
  });
});

describe("episode rules", () => {
  const fetch: Goal = { kind: "fetch", object: "white ball" };
  it("ends as soon as a state goal holds; later turns are never applied", () => {
    const ep = replay(world(), fetch, RULES, ["open east", "go east", "take white ball", "drop", "go west"]);
    expect([ep.end, ep.steps, ep.success]).toEqual(["goal", 3, true]);
  });
  it("answers an invalid command with the reason and the same observation; the third one ends it", () => {
    const ep = new WorldEpisode(world(), fetch, RULES);
    expect(ep.step("go east")).toEqual({
      text: `invalid: the east door is closed\n${observe(world())}`,
      invalid: "the east door is closed",
    });
    ep.step("jump");
    expect(ep.step("take white ball")).toMatchObject({ end: "invalid", invalid: "no white ball here" });
    expect([ep.invalid, ep.success]).toEqual([3, false]);
    expect(() => ep.step("look")).toThrow(/has ended \(invalid\)/);
  });
  it("ends on a no-op right after a no-op, on answer/done, and at the step limit", () => {
    expect(replay(world(), fetch, RULES, ["look", "open east", "look", "look", "go east"]).end).toBe("stuck");
    expect(replay(world(), fetch, RULES, ["look", "open east", "look", "go east"]).noops).toBe(2);
    const ans = replay(world(), fetch, RULES, ["answer 3", "open east"]);
    expect([ans.end, ans.answer, ans.steps]).toEqual(["answer", "3", 1]);
    expect(replay(world(), fetch, RULES, ["done"]).end).toBe("done");
    const walk = replay(world(), fetch, { maxSteps: 4, maxInvalid: 3 }, [
      "open east",
      "go east",
      "go west",
      "go east",
      "take white ball",
    ]);
    expect([walk.end, walk.steps, walk.success]).toEqual(["steps", 4, false]);
  });
});

describe('"world-goal" reward', () => {
  const gold: WorldGold = {
    world: world(),
    goal: { kind: "place", object: "white ball", box: "purple box" },
    rules: RULES,
  };
  const score = (turns: string[], options = {}) =>
    rewards.score("world-goal", { completion: "", gold, turns }, options);
  const solution = ["open east", "go east", "take white ball", "open purple box", "put purple box"];

  it("gives 1 to the solver's commands, as turns or as a transcript", async () => {
    expect((await score(solution)).score).toBe(1);
    const transcript = `open east\n@red hold:none\nsee: x\n> go east\n...\n> take white ball\n> open purple box\n> put purple box\n`;
    expect(transcriptCommands(transcript)).toEqual(solution);
    expect((await rewards.score("world-goal", { completion: transcript, gold })).score).toBe(1);
    expect(worldGoalReward.goldCompletion!(gold, { successWeight: 1, shapedWeight: 0 })).toBe(solution.join("\n> "));
  });

  it("gives nothing to the hacks a policy would find", async () => {
    const hacks: string[][] = [
      [],
      [""],
      ["done"],
      ["answer yes"],
      ["answer 1", ...solution], // an early answer ends the episode before the work
      ["done", ...solution], // commands after done are never applied
      ["x".repeat(10_000), "y".repeat(10_000), "z".repeat(10_000), ...solution], // three invalid commands end it
      ["look", "look", ...solution],
      solution.slice(0, 4), // stopping one command short
      [...solution.slice(0, 4), "drop"], // dropping beside the box is not placing
    ];
    for (const turns of hacks) expect((await score(turns)).score, JSON.stringify(turns).slice(0, 80)).toBe(0);
  });

  it("adds the shaped progress term only when asked: 1 − remaining/initial solver distance", async () => {
    const half = ["open east", "go east", "take white ball"]; // 2 of 5 commands left
    expect((await score(half)).score).toBe(0);
    const r = await score([...half, "done"], { successWeight: 1, shapedWeight: 0.5 });
    expect(r.terms).toEqual({ success: 0, progress: 1 - 2 / 5 });
    expect(r.score).toBeCloseTo(0.5 * 0.6, 12);
    expect((await score(solution, { shapedWeight: 0.5 })).score).toBe(1.5);
  });

  it("scores null (not 0) for a gold that is not a world task", async () => {
    for (const bad of [
      null,
      {},
      { world: world(), goal: { kind: "fly" }, rules: RULES },
      { ...gold, rules: { maxSteps: 0, maxInvalid: 1 } },
    ]) {
      const r = await rewards.score("world-goal", { completion: "done", gold: bad });
      expect(r.score).toBeNull();
      expect(String(r.info?.reason)).toMatch(/not a world task/);
    }
  });
});
