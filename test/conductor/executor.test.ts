/**
 * The Conductor's plan executor: each step's prompt holds its subtask and exactly the outputs of its access list;
 * independent steps run concurrently; timeouts, throws and skipped dependants are recorded in the chain; invalid
 * plans are never executed; self-calls stop at the depth limit.
 */
import { describe, expect, it } from "vitest";
import { executePlan, stepPrompt, checkPlan, type SelfCall } from "../../src/rollout/conductor/executor.js";
import { WorkerPool, programWorker, type Worker, type WorkerCall } from "../../src/rollout/conductor/pool.js";
import { parsePlan, type Plan } from "../../src/rewards/plan.js";

const info = (id: string) => ({ id, description: `worker ${id}`, maxTokens: 100, cost: 2 });

/** A worker that records every call and answers `OUT<step>` (the step index read from its subtask `s<step>`). */
function recorder(id: string, calls: WorkerCall[], delayMs = 0): Worker {
  return {
    ...info(id),
    async generate(call) {
      calls.push(call);
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      const text = `OUT${call.subtask.slice(1)}`;
      return { text, tokens: text.length };
    },
  };
}

const plan = (modelIds: number[], subtasks: string[], accessList: number[][]): Plan => ({
  modelIds,
  subtasks,
  accessList,
});

describe("step prompts", () => {
  it("hold the subtask and exactly the outputs of the access list, nothing else", async () => {
    const calls: WorkerCall[] = [];
    const pool = new WorkerPool([recorder("a", calls), recorder("b", calls)]);
    const chain = await executePlan(plan([0, 1, 0, 1], ["s0", "s1", "s2", "s3"], [[], [0], [], [2, 0]]), pool, {
      timeoutMs: 1000,
    });
    expect(chain.failed).toBe(false);
    expect(chain.answer).toBe("OUT3");
    const byStep = new Map(calls.map((c) => [c.subtask, c]));
    expect(byStep.get("s0")!.prompt).toBe("Task: s0\nAnswer:");
    expect(byStep.get("s1")!.prompt).toBe("Step 0: OUT0\nTask: s1\nAnswer:");
    expect(byStep.get("s2")!.prompt).toBe("Task: s2\nAnswer:"); // step 0 and 1 ran, but s2 may see neither
    // Access order is kept; the step not listed (1) is absent.
    expect(byStep.get("s3")!.prompt).toBe("Step 2: OUT2\nStep 0: OUT0\nTask: s3\nAnswer:");
    expect(byStep.get("s3")!.context).toEqual(["OUT2", "OUT0"]);
    expect(byStep.get("s3")!.prompt).not.toContain("OUT1");
    expect(chain.steps.map((s) => s.worker)).toEqual(["a", "b", "a", "b"]);
    expect(chain.steps[3]!.prompt).toBe(byStep.get("s3")!.prompt);
    // 4 outputs of 4 characters; cost 2 per 1,000 tokens.
    expect(chain.workerTokens).toBe(16);
    expect(chain.cost).toBeCloseTo(0.032, 12);
  });

  it("stepPrompt labels each visible output with its step index", () => {
    expect(stepPrompt("add", [{ index: 4, output: "1+2" }])).toBe("Step 4: 1+2\nTask: add\nAnswer:");
  });
});

describe("concurrency", () => {
  it("runs steps with disjoint access lists at the same time and waits for a step's dependencies", async () => {
    const calls: WorkerCall[] = [];
    const times: Record<string, [number, number]> = {};
    const slow: Worker = {
      ...info("slow"),
      async generate(call) {
        const t0 = performance.now();
        await new Promise((r) => setTimeout(r, 150));
        times[call.subtask] = [t0, performance.now()];
        calls.push(call);
        return { text: call.subtask, tokens: 1 };
      },
    };
    const t0 = performance.now();
    const chain = await executePlan(plan([0, 0, 0], ["s0", "s1", "s2"], [[], [], [0, 1]]), new WorkerPool([slow]), {
      timeoutMs: 2000,
    });
    const wall = performance.now() - t0;
    expect(chain.answer).toBe("s2");
    // s0 and s1 overlap (about 150 ms together, not 300), and s2 starts after both ended.
    expect(times.s1![0]).toBeLessThan(times.s0![1]);
    expect(times.s2![0]).toBeGreaterThanOrEqual(Math.max(times.s0![1], times.s1![1]) - 1);
    expect(wall).toBeLessThan(290 + 150);
  });
});

describe("failures are recorded in the chain and cost only this chain", () => {
  it("a worker that hangs times out, is aborted, and the steps that see it are skipped", async () => {
    let aborted = false;
    const hang: Worker = {
      ...info("hang"),
      generate: (call) =>
        new Promise(() => {
          call.signal.addEventListener("abort", () => (aborted = true));
        }),
    };
    const calls: WorkerCall[] = [];
    const pool = new WorkerPool([hang, recorder("ok", calls)]);
    const t0 = performance.now();
    const chain = await executePlan(plan([0, 1, 1], ["s0", "s1", "s2"], [[], [], [0]]), pool, { timeoutMs: 60 });
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(aborted).toBe(true);
    expect(chain.steps[0]!.status).toBe("error");
    expect(chain.steps[0]!.error).toMatch(/hang: timeout: no answer within 60 ms/);
    expect(chain.steps[1]!.status).toBe("ok"); // independent of the hung step
    expect(chain.steps[2]!.status).toBe("skipped");
    expect(chain.steps[2]!.error).toBe("skipped: step 0 failed");
    expect(calls.map((c) => c.subtask)).toEqual(["s1"]);
    expect(chain.answer).toBeNull();
    expect(chain.failed).toBe(true);
  });

  it("a worker that throws or answers no text fails its step with the message", async () => {
    const boom: Worker = {
      ...info("boom"),
      generate: async () => {
        throw new Error("CUDA out of memory");
      },
    };
    const mute = { ...info("mute"), generate: async () => ({ tokens: 3 }) } as unknown as Worker;
    const chain = await executePlan(plan([0, 1], ["s0", "s1"], [[], []]), new WorkerPool([boom, mute]), {
      timeoutMs: 500,
    });
    expect(chain.steps.map((s) => s.error)).toEqual(["boom: CUDA out of memory", "mute: answered no text"]);
    expect(chain.failed).toBe(true);
  });
});

describe("invalid plans are never executed", () => {
  const L = 10_000;
  const cases: [string, Plan][] = [
    ["unequal lists", plan([0, 0], ["s0"], [[], [0]])],
    ["unknown worker id", plan([0, 2], ["s0", "s1"], [[], [0]])],
    ["negative worker id", plan([-1], ["s0"], [[]])],
    ["access to a later step", plan([0, 0], ["s0", "s1"], [[1], []])],
    ["access to itself", plan([0, 0], ["s0", "s1"], [[], [1]])],
    ["repeated access", plan([0, 0, 0], ["s0", "s1", "s2"], [[], [0], [0, 0]])],
    [
      "10,000 steps",
      plan(
        Array(L).fill(0),
        Array(L).fill("s"),
        Array.from({ length: L }, () => []),
      ),
    ],
    ["an empty subtask", plan([0, 0], ["s0", "  "], [[], [0]])],
    ["no steps", plan([], [], [])],
  ];
  it.each(cases)("%s", async (_, p) => {
    const calls: WorkerCall[] = [];
    const chain = await executePlan(p, new WorkerPool([recorder("a", calls), recorder("b", calls)]), {
      timeoutMs: 100,
    });
    expect(calls).toHaveLength(0);
    expect(chain.invalid).toBeTruthy();
    expect(chain.steps).toHaveLength(0);
    expect(chain.failed).toBe(true);
    expect(checkPlan(p, 2, 16)).toBe(chain.invalid);
  });
});

describe("self-calls", () => {
  const adder = programWorker({
    ...info("adder"),
    run: (subtask, ctx) =>
      String(
        [subtask, ...ctx]
          .join("+")
          .match(/\d+/g)!
          .reduce((s, x) => s + Number(x), 0),
      ),
  });
  const pool = new WorkerPool([adder]);
  /** A planner whose plan for any question is `subPlan`, parsed over the pool plus self (2 ids). */
  const planner = (subPlan: string, maxDepth: number, seen: string[]): SelfCall => ({
    maxDepth,
    plan: async (question) => {
      seen.push(question);
      return { text: subPlan, tokens: subPlan.length };
    },
    parse: (text) => parsePlan(text, 2, 8),
  });

  it("a self step plans its prompt as a sub-question and answers with the sub-chain's answer", async () => {
    const seen: string[] = [];
    const sub = `model_id = [0]\nsubtasks = ["2 and 3"]\naccess_list = [[]]`;
    const chain = await executePlan(plan([1, 0], ["sub", "add 10"], [[], [0]]), pool, {
      timeoutMs: 500,
      self: planner(sub, 1, seen),
    });
    expect(seen).toEqual(["Task: sub\nAnswer:"]);
    expect(chain.steps[0]!.worker).toBe("self");
    expect(chain.steps[0]!.output).toBe("5");
    expect(chain.steps[0]!.sub!.depth).toBe(1);
    expect(chain.steps[0]!.tokens).toBe(sub.length + 1); // its plan plus the sub-chain's one output token
    expect(chain.answer).toBe("15");
  });

  it("stops at the recursion depth limit", async () => {
    const seen: string[] = [];
    const recursive = `model_id = [1]\nsubtasks = ["again"]\naccess_list = [[]]`;
    const chain = await executePlan(plan([1], ["go"], [[]]), pool, {
      timeoutMs: 500,
      self: planner(recursive, 2, seen),
    });
    expect(seen).toHaveLength(2); // depth 1 and depth 2 plan; the depth-3 call is refused before planning
    expect(chain.failed).toBe(true);
    const inner = chain.steps[0]!.sub!.steps[0]!.sub!.steps[0]!;
    expect(inner.error).toBe("self: recursion depth limit 2 reached");
  });

  it("without self, the id after the pool's last is unknown", async () => {
    const chain = await executePlan(plan([1], ["go"], [[]]), pool, { timeoutMs: 100 });
    expect(chain.invalid).toBe("step 0: unknown worker id 1");
  });
});
