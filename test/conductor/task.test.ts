/**
 * The conductor task over the exact skill workers: gold plans earn 1 through the executed chain, single workers
 * given the whole question do not, the reward is 1 / 0.5 / 0 as the spec says, each bad input gets its reward and is
 * never executed, and a worker that hangs or throws costs only its rollout (0.5, the failure in the chain).
 */
import { describe, expect, it } from "vitest";
import "../../src/rewards/index.js";
import { getTask } from "../../src/tasks/index.js";
import { createConductor } from "../../src/rollout/conductor/index.js";
import { WorkerPool, openaiWorker, programWorker, type Worker } from "../../src/rollout/conductor/pool.js";
import { conductorTask, isCorrectAnswer, DEFAULT_WORKERS } from "../../src/tasks/conductor.js";
import { SKILLS, drawQuestion, goldPlan, planText, skillPairs } from "../../src/tasks/conductor-skills.js";
import { splitOf } from "../../src/tasks/generate.js";
import { parsePlan } from "../../src/rewards/plan.js";
import { Transformer } from "../../src/models/transformer.js";
import { parseTransformerConfig } from "../../src/models/config.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { saveModel } from "../../src/models/checkpoint.js";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import type { Chain } from "../../src/rollout/conductor/executor.js";
import { Rng } from "../../src/util/index.js";

/** The default pool as program workers, counting calls. */
function countingPool(calls: { n: number }, replace: Record<number, Worker> = {}): WorkerPool {
  return new WorkerPool(
    DEFAULT_WORKERS.map((w, i) => {
      if (replace[i]) return replace[i]!;
      const skill = (w.source as { skill: keyof typeof SKILLS }).skill;
      return programWorker({
        ...w,
        run: (s, c) => {
          calls.n++;
          return SKILLS[skill](s, c);
        },
      });
    }),
  );
}

describe("skills and questions", () => {
  it("a hand-checked word problem: read → multiply → add", () => {
    const q = "Ann has 23 boxes of 7 pens and 158 loose pens. How many pens?";
    expect(SKILLS.read(q, [])).toBe("23*7+158");
    expect(SKILLS.multiply("multiply", ["23*7+158"])).toBe("161+158");
    expect(SKILLS.add("add", ["161+158"])).toBe("0319");
    expect(isCorrectAnswer("0319", 319)).toBe(true); // a padded sum is still exactly its integer
    expect(SKILLS.add("add", ["23*7+158"])).toBe("23*7+158"); // the adder cannot multiply
    expect(SKILLS.generalist(q, [])).toBe(String(160 + 158)); // weak at multiplication
    expect(SKILLS.generalist("Compute 3*4+158.", [])).toBe(String(12 + 158)); // one-digit factors: right
    const add = "Bob has 905 cups and gets 097 more. How many cups?";
    expect(SKILLS.read(add, [])).toBe("905+097");
    expect(SKILLS.add("add", ["905+097"])).toBe("1002");
    expect(SKILLS.generalist(add, [])).toBe("1002"); // sums are right
  });

  it("formats are fixed-width: zero-padded products and sums, three-letter names and four-letter items", () => {
    expect(SKILLS.multiply("multiply", ["12*3+005"])).toBe("036+005");
    expect(SKILLS.multiply("Compute 123*9+000.", [])).toBe("1107+000");
    expect(SKILLS.add("add", ["036+005"])).toBe("0041");
    const rng = new Rng(4);
    for (const kind of ["word", "expr", "word-add"] as const) {
      const lengths = new Set(Array.from({ length: 50 }, () => drawQuestion(rng, kind, 2).question.length));
      expect(lengths.size).toBe(1); // every number and word of a template at the same place
    }
    const q = drawQuestion(new Rng(9), "word", 3);
    expect(q.expression).toMatch(/^\d{3}\*[2-9]\+\d{3}$/);
    expect(q.answer).toBe(eval(q.expression.replace(/\b0+(\d)/g, "$1")));
  });

  it("isCorrectAnswer accepts the bare integer only", () => {
    expect(isCorrectAnswer("1239", 1239)).toBe(true);
    expect(isCorrectAnswer(" 1239\n", 1239)).toBe(true);
    expect(isCorrectAnswer("1238 1239", 1239)).toBe(false); // listing candidates earns nothing
    expect(isCorrectAnswer("answer: 1239", 1239)).toBe(false);
    expect(isCorrectAnswer("1081+158", 1239)).toBe(false);
    expect(isCorrectAnswer(null, 1239)).toBe(false);
  });

  it("examples are seeded, train and test disjoint, and gold plans are the skills in order", () => {
    const t = conductorTask.create({});
    const a = t.generate("train", 30, 3);
    expect(t.generate("train", 30, 3)).toEqual(a);
    const test = new Set(t.generate("test", 30, 3).map((e) => e.prompt));
    expect(a.some((e) => test.has(e.prompt))).toBe(false);
    const q = drawQuestion(new Rng(1), "word", 2);
    expect(goldPlan(q, { read: 0, multiply: 1, add: 2 })).toEqual({
      modelIds: [0, 1, 2],
      subtasks: [q.question, "multiply", "add"],
      accessList: [[], [0], [1]],
    });
    expect(goldPlan(q, { read: 0, add: 2 })).toBeNull();
  });
});

describe("the conductor task through the registry", () => {
  it("gold plans earn 1 through the executed chain, with the chain in the reward info", async () => {
    const task = getTask("conductor", { kinds: ["word", "expr", "word-add"] });
    for (const ex of task.generate("train", 12, 0)) {
      const res = await task.score(ex, ex.goldCompletion);
      expect(res.score).toBe(1);
      const chain = res.info!.chain as Chain;
      expect(Number(chain.answer)).toBe((ex.gold as { answer: number }).answer);
      expect(chain.steps.length).toBeGreaterThanOrEqual(2);
    }
  });

  it("the best single worker given the whole question is right less often than the gold chains", async () => {
    const task = getTask("conductor", { kinds: ["word", "expr"] });
    const examples = task.generate("test", 20, 0);
    for (const w of [0, 1, 2, 3]) {
      let right = 0;
      for (const ex of examples) {
        const q = ex.prompt.split("Question: ")[1]!.split("\n")[0]!;
        const res = await task.score(ex, planText({ modelIds: [w], subtasks: [q], accessList: [[]] }));
        expect(res.score === 1 || res.score === 0.5).toBe(true);
        if (res.score === 1) right++;
      }
      expect(right).toBeLessThan(examples.length / 2);
    }
  });

  it("the prompt lists every worker with its index and description", () => {
    const ex = getTask("conductor").generate("train", 1, 0)[0]!;
    expect(ex.prompt).toMatch(/^Workers:\n0 reader: reads a word problem into an expression\n1 multiplier: /);
    expect(ex.prompt).toMatch(/\nQuestion: .*\nPlan:\n$/);
  });

  it("rejects bad options with the field's name", () => {
    expect(() => getTask("conductor", { workers: [] })).toThrow(/workers/);
    expect(() => getTask("conductor", { selfCalls: { maxDepth: 1 } })).toThrow(/selfCalls\.planner/);
  });
});

describe("rewards of bad input, never executed", () => {
  const ex = conductorTask.create({ kinds: ["word"] }).generate("train", 1, 0)[0]!;
  const q = ex.prompt.split("Question: ")[1]!.split("\n")[0]!;
  const L = 10_000;
  const many = `model_id = [${Array(L).fill(0).join(", ")}]\nsubtasks = [${Array(L).fill('"x"').join(", ")}]\naccess_list = [${Array(L).fill("[]").join(", ")}]`;
  const cases: [string, string, number][] = [
    ["the gold plan", ex.goldCompletion, 1],
    ["a valid plan with a wrong answer", planText({ modelIds: [3], subtasks: [q], accessList: [[]] }), 0.5],
    ["unequal lists", `model_id = [0, 1]\nsubtasks = ["${q}"]\naccess_list = [[], [0]]`, 0],
    ["an unknown worker id", `model_id = [0, 9]\nsubtasks = ["${q}", "add"]\naccess_list = [[], [0]]`, 0],
    ["access to a later step", `model_id = [0, 2]\nsubtasks = ["${q}", "add"]\naccess_list = [[1], []]`, 0],
    ["access to itself", `model_id = [0, 2]\nsubtasks = ["${q}", "add"]\naccess_list = [[], [1]]`, 0],
    ["10,000 steps", many, 0],
    [
      "five steps (over maxSteps 4)",
      planText({ modelIds: [0, 0, 0, 0, 0], subtasks: Array(5).fill(q), accessList: [[], [], [], [], []] }),
      0,
    ],
    ["an empty subtask", `model_id = [0, 2]\nsubtasks = ["${q}", ""]\naccess_list = [[], [0]]`, 0],
    ["prose", "I would ask the reader, then the adder.", 0],
  ];
  it.each(cases)("%s", async (_, completion, reward) => {
    const calls = { n: 0 };
    const task = createConductor({ kinds: ["word"] }, { pool: countingPool(calls) });
    const res = await task.score(ex, completion);
    expect(res.score).toBe(reward);
    if (reward === 0) {
      expect(calls.n).toBe(0);
      expect(res.info!.chain).toBeUndefined();
      expect(typeof res.info!.plan).toBe("string");
    } else expect(calls.n).toBeGreaterThan(0);
  });
});

describe("a worker that hangs or throws: infrastructure failures are not scorable, bad answers cost the rollout", () => {
  const ex = conductorTask.create({ kinds: ["word"] }).generate("train", 1, 0)[0]!;
  it("hangs: the step times out, the chain fails and is not scorable (null, rewards spec §8); 0.5 with onInfraFailure parse", async () => {
    const hang: Worker = {
      id: "multiplier",
      description: "m",
      maxTokens: 9,
      cost: 1,
      generate: () => new Promise(() => {}),
    };
    const task = createConductor({ kinds: ["word"], timeoutMs: 50 }, { pool: countingPool({ n: 0 }, { 1: hang }) });
    const t0 = performance.now();
    const res = await task.score(ex, ex.goldCompletion);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(res.score).toBeNull();
    const chain = res.info!.chain as Chain;
    expect(chain.steps.map((s) => s.status)).toEqual(["ok", "error", "skipped"]);
    expect(chain.steps[1]!.error).toMatch(/timeout/);
    expect([chain.steps[1]!.infra, chain.infraFailure]).toEqual([true, true]);
    const lenient = createConductor(
      { kinds: ["word"], timeoutMs: 50, onInfraFailure: "parse" },
      { pool: countingPool({ n: 0 }, { 1: hang }) },
    );
    expect((await lenient.score(ex, ex.goldCompletion)).score).toBe(0.5);
  });
  it("an HTTP error or a malformed server reply is the infrastructure's (null); an empty answer is the worker's (0.5)", async () => {
    const reply = (status: number, body: string): Worker =>
      openaiWorker({
        id: "adder",
        description: "a",
        maxTokens: 9,
        cost: 1,
        baseUrl: "http://x/v1",
        model: "m",
        fetch: (async () => new Response(body, { status })) as typeof fetch,
      });
    const chat = (content: string) => JSON.stringify({ choices: [{ message: { content } }] });
    for (const [w, score] of [
      [reply(503, "overloaded"), null],
      [reply(200, "<html>"), null],
      [reply(200, "{}"), null],
      [reply(200, chat("")), 0.5],
      [reply(200, chat("seven")), 0.5],
    ] as const) {
      const task = createConductor({ kinds: ["word"] }, { pool: countingPool({ n: 0 }, { 2: w }) });
      const res = await task.score(ex, ex.goldCompletion);
      expect(res.score, (res.info!.chain as Chain).steps[2]!.error ?? "").toBe(score);
    }
  });
  it("throws: recorded, 0.5", async () => {
    const boom: Worker = {
      id: "adder",
      description: "a",
      maxTokens: 9,
      cost: 1,
      generate: async () => {
        throw new Error("connection refused");
      },
    };
    const task = createConductor({ kinds: ["word"] }, { pool: countingPool({ n: 0 }, { 2: boom }) });
    const res = await task.score(ex, ex.goldCompletion);
    expect(res.score).toBe(0.5);
    expect((res.info!.chain as Chain).steps[2]!.error).toBe("adder: connection refused");
  });
});

describe("self-calls through the task", () => {
  const tokenizer = new CharTokenizer();
  // A planner long enough for the prompt (~330 characters with self listed) plus a plan.
  const model = new Transformer(
    parseTransformerConfig({
      arch: "llama",
      vocabSize: tokenizer.vocabSize,
      dModel: 16,
      nLayers: 1,
      nHeads: 2,
      nKvHeads: 2,
      dFf: 32,
      maxSeqLen: 640,
    }),
    new Rng(5),
  ).eval();
  it("the planner is listed as the last worker, and a self step runs the planner on its prompt", async () => {
    const task = createConductor({ kinds: ["expr"], selfCalls: { maxDepth: 1 } }, { planner: { model, tokenizer } });
    const ex = task.generate("train", 1, 0)[0]!;
    expect(ex.prompt).toContain("\n4 self: the planner itself: plans a sub-question\n");
    const res = await task.score(ex, planText({ modelIds: [4], subtasks: ["Compute 2*3+4."], accessList: [[]] }));
    expect(res.score).toBe(0.5); // an untrained planner's sub-plan does not parse: the chain fails, the plan parsed
    const step = (res.info!.chain as Chain).steps[0]!;
    expect(step.worker).toBe("self");
    expect(step.error).toMatch(/^self: its plan is invalid/);
    expect(step.tokens).toBeGreaterThan(0);
  });
  it("through a recipe, the planner copy is a checkpoint named in selfCalls.planner", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-planner-"));
    saveModel(dir, model, tokenizer);
    const task = getTask("conductor", { selfCalls: { maxDepth: 1, planner: { type: "checkpoint", path: dir } } });
    const ex = task.generate("train", 1, 0)[0]!;
    const res = await task.score(ex, planText({ modelIds: [4, 2], subtasks: ["x", "add"], accessList: [[], [0]] }));
    const chain = res.info!.chain as Chain;
    expect(chain.steps.map((s) => s.status)).toEqual(["error", "skipped"]);
    expect(() => getTask("conductor", { selfCalls: { planner: { type: "program", skill: "add" } } })).toThrow(
      /selfCalls\.planner/,
    );
  });
});

describe("skill workers' SFT data", () => {
  it("pairs are the prompts a worker sees in gold chains, answered by its skill", () => {
    const pairs = skillPairs("multiply", 20, new Rng(2));
    expect(pairs).toHaveLength(20);
    for (const p of pairs) {
      const ctx = /^Step 0: (.*)\n/.exec(p.prompt)?.[1];
      const subtask = /Task: (.*)\nAnswer:$/.exec(p.prompt)![1]!;
      expect(p.completion).toBe(SKILLS.multiply(subtask, ctx ? [ctx] : []));
      expect(p.completion).not.toContain("*");
    }
    expect(skillPairs("generalist", 3, new Rng(2)).every((p) => p.prompt.startsWith("Task: "))).toBe(true);
  });

  it("uses only questions of the train split, so no worker has seen a held-out question", () => {
    const questions = skillPairs("generalist", 300, new Rng(3)).map(
      (p) => /^Task: (.*)\nAnswer:$/s.exec(p.prompt)![1]!,
    );
    expect(questions.every((q) => splitOf(q) === "train")).toBe(true);
    // the same draws, unfiltered, do include held-out questions: the filter is what keeps them out
    const rng = new Rng(3);
    const drawn = Array.from({ length: 300 }, () => drawQuestion(rng, "word", 2).question);
    expect(drawn.some((q) => splitOf(q) === "test")).toBe(true);
  });
});

describe("the format-only warm start", () => {
  it("keeps the questions, and its SFT targets are well-formed plans with random routing", () => {
    const gold = conductorTask.create({}).generate("train", 200, 5);
    const format = conductorTask.create({ warmStart: "format" }).generate("train", 200, 5);
    expect(format.map((e) => e.prompt)).toEqual(gold.map((e) => e.prompt)); // the same question stream
    const verbs = ["read", "multiply", "add", "answer"];
    const lengths = new Set<number>();
    let goldRouting = 0;
    for (const [i, e] of format.entries()) {
      const parsed = parsePlan(e.goldCompletion, 4);
      if (!("plan" in parsed)) throw new Error(parsed.error);
      const { modelIds, subtasks, accessList } = parsed.plan;
      lengths.add(modelIds.length);
      expect(subtasks[0]).toBe(/Question: (.*)\n/.exec(e.prompt)![1]);
      expect(subtasks.slice(1).every((s, j) => s === verbs[modelIds[j + 1]!])).toBe(true);
      expect(accessList).toEqual(modelIds.map((_, j) => (j === 0 ? [] : [j - 1])));
      if (e.goldCompletion === gold[i]!.goldCompletion) goldRouting++;
    }
    expect([...lengths].sort()).toEqual([1, 2, 3]);
    expect(goldRouting).toBeLessThan(20); // chance routing: gold is 1 in 16-64 of the plans of its length
  });
});
