/**
 * SAKE: the seeded knowledge-graph generator (determinism, held-out entity split, held facts out of the tools'
 * graph), the two tools, the gold trajectory (full reward, and exactly what the environment inserts), and bad
 * input: malformed calls, unknown tools, oversized arguments, unknown names, calls out of order.
 */
import { describe, expect, it } from "vitest";
import "../../src/rewards/index.js";
import { getTask, sakeTestSize } from "../../src/tasks/index.js";
import type { Example } from "../../src/tasks/types.js";
import type { KgGold } from "../../src/rewards/kg-answer.js";
import { buildGraph, entitySplit, linkingTriplets, resolveEntity, similarGroup } from "../../src/tasks/sake-graph.js";
import { createKgTools, getEnvironment, parseCall } from "../../src/envs/index.js";
import type { EnvReply } from "../../src/envs/types.js";

const task = getTask("sake");
const graph = buildGraph({});
const train = task.generate("train", 120, 0) as Example<KgGold>[];
const test = task.generate("test", 20, 0) as Example<KgGold>[];

/** The gold transcript cut into its three model turns and two tool answers. */
function cut(gold: string): { turns: string[]; tools: string[] } {
  const m =
    /^(<entities>.*?<\/entities>)([\s\S]*?<\/info>\n)(<groups>.*?<\/groups>)([\s\S]*?<\/info>\n)([\s\S]*)$/.exec(gold);
  expect(m, gold).not.toBeNull();
  return { turns: [m![1]!, m![3]!, m![5]!], tools: [m![2]!, m![4]!] };
}
const drugOf = (e: Example) => resolveEntity(graph, /does (\S+) /.exec(e.prompt)![1]!)!;

describe("knowledge-graph generator", () => {
  it("is deterministic in its seed, and another seed gives another graph", () => {
    const again = buildGraph({ seed: 0, drugClasses: 6 });
    expect(again.triplets).toEqual(graph.triplets);
    expect(task.generate("train", 30, 0)).toEqual(train.slice(0, 30));
    const other = buildGraph({ seed: 1 });
    expect(other.triplets).not.toEqual(graph.triplets);
    expect(task.generate("train", 30, 1)).not.toEqual(train.slice(0, 30));
  });

  it("has typed concepts with synonyms and the four relations", () => {
    const rels = new Set(graph.triplets.map((t) => t.rel));
    expect([...rels].sort()).toEqual(["causes", "interacts_with", "is_a", "treats"]);
    const drugs = [...graph.concepts.values()].filter((c) => c.type === "drug");
    expect(drugs).toHaveLength(30);
    for (const d of drugs) expect(resolveEntity(graph, d.synonyms[0]!)).toBe(d.name);
  });

  it("held-out questions are about drugs never asked about in training", () => {
    const trainDrugs = new Set(train.map(drugOf));
    const testDrugs = new Set(test.map(drugOf));
    expect(testDrugs.size).toBeGreaterThan(2);
    for (const d of testDrugs) {
      expect(trainDrugs.has(d)).toBe(false);
      expect(entitySplit(d)).toBe("test");
    }
  });

  it("every question is answerable from what the tools show: a yes has a linking triplet with its relation, a no none", () => {
    const big = getTask("sake", { graph: { drugClasses: 12, drugsPerClass: 8 } });
    const all = [...train, ...test, ...big.generate("train", 3000, 0), ...big.generate("test", 74, 0)];
    for (const e of all) {
      const think = /<think>(.*)<\/think>/.exec(e.goldCompletion!)![1]!;
      const rel = /^Q: does \S+ (treat|cause) /.exec(e.prompt)![1]!;
      if (e.gold.answers[0] === "yes") expect(think).toMatch(new RegExp(` ${rel}s `));
      else expect(think).toBe(`no ${rel}s link`);
    }
    // the label noise this removes: on the bench's graph, 82 of 8,080 questions had a yes the tools could not show
    expect(sakeTestSize({ graph: { drugClasses: 12, drugsPerClass: 8 } })).toBe(74);
  });

  it("the facts asked by yes-questions are held out of the graph the tools see; answers are balanced", () => {
    const seen = new Set(graph.triplets.map((t) => `${t.head} ${t.rel} ${t.tail}`));
    for (const h of graph.held) expect(seen.has(`${h.head} ${h.rel} ${h.tail}`)).toBe(false);
    const yes = test.filter((e) => e.gold.answers[0] === "yes").length;
    expect(yes).toBe(test.length / 2);
  });
});

describe("the two tools", () => {
  const drug = [...graph.concepts.values()].find((c) => c.type === "drug")!;
  it("tool 1: the entity first, then its most similar concepts of the same type (class-mates)", () => {
    const g = similarGroup(graph, drug.name);
    expect(g[0]).toBe(drug.name);
    expect(g).toHaveLength(3);
    for (const n of g) {
      expect(graph.concepts.get(n)!.type).toBe("drug");
      expect(graph.concepts.get(n)!.cluster).toBe(drug.cluster);
    }
  });
  it("tool 2: only triplets whose ends lie in two different kept groups, at most maxTriplets", () => {
    const fact = graph.held.find((h) => h.head === drug.name)!;
    const groups = [similarGroup(graph, drug.name), similarGroup(graph, fact.tail)];
    const links = linkingTriplets(graph, groups);
    expect(links.length).toBeGreaterThan(0);
    expect(links.length).toBeLessThanOrEqual(6);
    for (const t of links) {
      const a = groups.findIndex((g) => g.includes(t.head));
      const b = groups.findIndex((g) => g.includes(t.tail));
      expect(a).toBeGreaterThanOrEqual(0);
      expect(b).toBeGreaterThanOrEqual(0);
      expect(a).not.toBe(b);
    }
  });
});

describe("gold trajectories", () => {
  it("earn full reward (3 turns, format and exact match) under both presets", async () => {
    const t7 = getTask("sake", { preset: "sake7b" });
    for (const e of [...train.slice(0, 40), ...test]) {
      const { turns } = cut(e.goldCompletion);
      const r = await task.score(e, e.goldCompletion, undefined, turns);
      expect(r.score, e.id).toBe(1);
      expect(r.terms["em"]).toBe(1);
      expect((await t7.score(e, e.goldCompletion, undefined, turns)).score).toBe(1);
    }
  });

  it("the presets weigh format 0.3/0.7 and 0.2/0.8: a well-formed wrong answer", async () => {
    const e = test[0]!;
    const { turns } = cut(e.goldCompletion);
    const wrong = [...turns.slice(0, 2), turns[2]!.replace(/<answer>\w+</, "<answer>maybe<")];
    expect((await task.score(e, "", undefined, wrong)).score).toBeCloseTo(0.3, 12);
    expect((await getTask("sake", { preset: "sake7b" }).score(e, "", undefined, wrong)).score).toBeCloseTo(0.2, 12);
  });

  it("are exactly what the environment inserts when the gold turns are played", async () => {
    const env = getEnvironment(task.environment!.name, task.environment!.options);
    for (const e of [...train.slice(0, 20), ...test]) {
      const { turns, tools } = cut(e.goldCompletion);
      const ep = env.start(e);
      const r1 = (await ep.step(turns[0]!, { turn: 1, end: "stop" })) as Extract<EnvReply, { kind: "observation" }>;
      const r2 = (await ep.step(turns[1]!, { turn: 2, end: "stop" })) as Extract<EnvReply, { kind: "observation" }>;
      expect([r1.text, r2.text]).toEqual(tools);
      expect(r1.error ?? r2.error).toBeUndefined();
      expect(await ep.step(turns[2]!, { turn: 3, end: "stop" })).toEqual({ kind: "end" });
    }
  });
});

describe("bad input to the kg tools", () => {
  const env = createKgTools({ badInputReward: -0.25 });
  const step = async (...turns: string[]) => {
    const ep = env.start(test[0]!);
    let r: EnvReply | undefined;
    for (const [i, t] of turns.entries()) r = await ep.step(t, { turn: i + 1, end: "stop" });
    return r!;
  };
  const limits = { maxArgChars: 80, maxArgs: 4 };

  it("a malformed turn (no call, no answer) ends the episode with the bad-input reward and an error", async () => {
    expect(await step("I think yes")).toEqual({
      kind: "end",
      reward: -0.25,
      error: expect.stringMatching(/^malformed/),
    });
    expect(parseCall("<entities> ; </entities>", limits)).toMatchObject({ kind: "bad", error: "malformed" });
    // A protocol tag left open (the turn budget cut a <think>) is malformed, not an unknown tool.
    expect(parseCall("<think>lufud treats", limits)).toMatchObject({ kind: "bad", error: "malformed" });
    expect(parseCall("<think>a</think> <search>b</search>", limits)).toMatchObject({ error: "unknown tool" });
  });
  it("an unknown tool ends the episode with the bad-input reward and an error", async () => {
    expect(await step("<search>aspirin</search>")).toEqual({
      kind: "end",
      reward: -0.25,
      error: "unknown tool: unknown tool <search>",
    });
  });
  it("an oversized argument (too long, or too many names) ends the episode", async () => {
    expect(await step(`<entities>${"x".repeat(200)}</entities>`)).toMatchObject({ reward: -0.25, error: /^oversized/ });
    expect(await step("<entities>a; b; c; d; e</entities>")).toMatchObject({ reward: -0.25, error: /^oversized/ });
  });
  it("an unknown entity is answered as text and counted; the episode goes on", async () => {
    const r = await step("<entities>qqqq; lufud</entities>");
    expect(r.kind).toBe("observation");
    expect(r).toMatchObject({ error: 'unknown entity "qqqq"' });
    expect((r as { text: string }).text).toContain("qqqq: unknown");
  });
  it("groups before entities, or fewer than two known groups, are answered as errors", async () => {
    expect(await step("<groups>a; b</groups>")).toMatchObject({ kind: "observation", error: "groups before entities" });
    const e = test[0]!;
    const { turns } = cut(e.goldCompletion);
    expect(await step(turns[0]!, "<groups>nothing; else</groups>")).toMatchObject({
      kind: "observation",
      error: expect.stringContaining("fewer than two groups"),
    });
  });
  it("options are validated with the field named", () => {
    expect(() => createKgTools({ maxTurns: 0 })).toThrow(/maxTurns/);
    expect(() => getEnvironment("nope")).toThrow(/known: .*kg-tools/);
  });
});

describe("the ablation without the filtering turn (filterTurn: false)", () => {
  const noFilter = getTask("sake", { filterTurn: false });
  const examples = noFilter.generate("train", 40, 0) as Example<KgGold>[];
  const turnsOf = (e: Example) => e.goldSegments!.filter((s) => s.kind === "model").map((s) => s.text);

  it("has two model turns, and tool 1's answer carries the groups and their linking triplets", async () => {
    const env = getEnvironment("kg-tools", { filterTurn: false });
    for (const e of examples) {
      const segs = e.goldSegments!;
      expect(segs.map((s) => s.kind)).toEqual(["model", "inserted", "model"]);
      const full = train.find((t) => t.prompt === e.prompt);
      if (full) expect(segs[1]!.text).toBe(full.goldSegments![1]!.text + full.goldSegments![3]!.text);
      const ep = env.start(e);
      expect(await ep.step(segs[0]!.text, { turn: 1, end: "stop" })).toEqual({
        kind: "observation",
        text: segs[1]!.text,
      });
      expect(await ep.step(segs[2]!.text, { turn: 2, end: "stop" })).toEqual({ kind: "end" });
    }
    expect(examples.some((e) => train.some((t) => t.prompt === e.prompt))).toBe(true); // the comparison above ran
  });

  it("scores its two-turn gold in full; a <groups> call is an unknown tool there", async () => {
    for (const e of examples.slice(0, 10)) {
      const r = await noFilter.score(e, e.goldCompletion, undefined, turnsOf(e));
      expect(r.terms).toEqual({ kg: 1, em: 1 });
      // The three-turn protocol earns no format credit in the two-turn task, and vice versa.
      const three = await noFilter.score(e, "", undefined, [
        "<entities>a; b</entities>",
        "<groups>a; b</groups>",
        turnsOf(e)[1]!,
      ]);
      expect(three.terms.kg).toBeCloseTo(0.7, 12);
    }
    const env = createKgTools({ filterTurn: false });
    const ep = env.start(examples[0]!);
    await ep.step(turnsOf(examples[0]!)[0]!, { turn: 1, end: "stop" });
    expect(await ep.step("<groups>a; b</groups>", { turn: 2, end: "stop" })).toEqual({
      kind: "end",
      reward: 0,
      error: "unknown tool: no <groups> tool without the filtering turn",
    });
  });
});

describe("sakeTestSize", () => {
  it("is twice the held-out yes-questions: the whole test split, and no more", async () => {
    const { sakeTestSize } = await import("../../src/tasks/index.js");
    expect(sakeTestSize()).toBe(26);
    expect(() => task.generate("test", sakeTestSize(), 0)).not.toThrow();
    expect(() => task.generate("test", sakeTestSize() + 1, 0)).toThrow(/at most 26 test examples/);
    const big = { graph: { drugClasses: 12, drugsPerClass: 8 } };
    expect(sakeTestSize(big)).toBeGreaterThan(60);
  });
});
