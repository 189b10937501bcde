/** Built-in tasks and the task registry: determinism, disjoint splits, sizes, gold completions, term scoring. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  BUILTIN_TASKS,
  getTask,
  listTasks,
  registerTask,
  scoreTerms,
  scoreWithTerms,
  splitOf,
  TaskRegistry,
} from "../../src/tasks/index.js";
import { RewardRegistry, rewards } from "../../src/rewards/registry.js";
import { parseExpression } from "../../src/rewards/countdown.js";
import type { Task } from "../../src/tasks/types.js";
import "../../src/rewards/text-rewards.js"; // registers the real maths checker (math-answer)

describe("task registry", () => {
  it("lists the built-ins", () => {
    expect(listTasks().map((d) => d.name)).toEqual(
      expect.arrayContaining(["addition", "arithmetic", "countdown", "linear-equation"]),
    );
  });
  it("rejects duplicate names", () => {
    expect(() => registerTask(BUILTIN_TASKS[0]!)).toThrow(/already registered/);
  });
  it("unknown names list the known ones", () => expect(() => getTask("nope")).toThrow(/known: .*addition/));
  it("validates options and names the field", () => {
    expect(() => getTask("addition", { maxDigits: 0 })).toThrow(/maxDigits/);
    expect(() => getTask("addition", { digits: 3 })).toThrow(/digits/);
    expect(() => getTask("addition", { minDigits: 4, maxDigits: 2 })).toThrow(/minDigits/);
  });
  it("accepts a plain task (no options) and rejects non-kebab names", () => {
    const reg = new TaskRegistry();
    const plain = { ...getTask("addition"), name: "my-task" } as Task;
    reg.register(plain);
    expect(reg.get("my-task")).toBe(plain);
    expect(() => reg.get("my-task", { x: 1 })).toThrow(/my-task/);
    expect(() => reg.register({ ...plain, name: "MyTask" })).toThrow(/kebab/);
  });
});

describe.each(BUILTIN_TASKS.map((d) => d.name))("built-in task %s", (name) => {
  const task = getTask(name);
  const train = task.generate("train", 400, 7);
  const test = task.generate("test", 100, 7);

  it("is deterministic in (split, count, seed), and a different seed gives different problems", () => {
    expect(task.generate("train", 400, 7)).toEqual(train);
    expect(task.generate("train", 50, 8).map((e) => e.prompt)).not.toEqual(train.slice(0, 50).map((e) => e.prompt));
  });
  it("train and test share no prompt, even across seeds", () => {
    const other = new Set(
      task
        .generate("test", 100, 99)
        .concat(test)
        .map((e) => e.prompt),
    );
    expect(train.filter((e) => other.has(e.prompt))).toEqual([]);
  });
  it("has unique ids and prompts within a split", () => {
    expect(new Set(train.map((e) => e.id)).size).toBe(train.length);
    expect(new Set(train.map((e) => e.prompt)).size).toBe(train.length);
    expect(train[3]!.id).toBe(`${name}/train/3`);
  });
  it("keeps prompts and gold completions short for a character-level model", () => {
    for (const e of train) {
      expect(e.prompt.length).toBeLessThanOrEqual(44);
      expect(e.goldCompletion.length).toBeLessThanOrEqual(task.maxNewTokens!);
      expect(e.goldCompletion).toMatch(/^\\boxed\{[^{}]+\}$/);
    }
  });
  it("has a correctness term and a lighter format term", () => {
    expect(task.terms.map((t) => t.name)).toEqual(["correct", "format"]);
    expect(task.correctTerm).toBe("correct");
    expect(task.terms[1]!.weight).toBeLessThan(task.terms[0]!.weight);
    expect(task.stop).toEqual(["}"]);
  });
  it("every gold completion earns full score", async () => {
    for (const e of test.slice(0, 30)) {
      const r = await task.score(e, e.goldCompletion);
      expect(r.score, e.prompt).toBeCloseTo(1 + task.terms[1]!.weight, 12);
      expect(r.terms.correct).toBe(1);
    }
  });
});

describe("adversarial completions earn no correctness", () => {
  it.each(["addition", "arithmetic", "linear-equation"])("%s", async (name) => {
    const task = getTask(name);
    const [e] = task.generate("test", 1, 5);
    const a = e!.gold.answer;
    const cases: [string, number, number][] = [
      [`${a}`, 0, 0], // bare number: strict mode needs a box
      [`\\boxed{${a}`, 0, 0], // unclosed box
      [`\\boxed{${Number(a) + 1}}`, 0, 1],
      [`\\boxed{${a}} or \\boxed{${Number(a) + 1}}`, 0, 0], // hedging: only the last box counts, and the format fails
      [`\\boxed{${a}}\\boxed{${a}}`, 1, 0], // a repeated box: right, but not the format
      [`The answer is \\boxed{${a}}`, 1, 0], // prose around the box costs the format term only
      [`\\boxed{}`, 0, 0],
    ];
    for (const [c, correct, format] of cases) {
      const r = await task.score(e!, c);
      expect([r.terms.correct, r.terms.format], c).toEqual([correct, format]);
    }
  });
  it("countdown", async () => {
    const task = getTask("countdown");
    const [e] = task.generate("test", 1, 5);
    const expr = e!.goldCompletion.slice("\\boxed{".length, -1);
    for (const c of [
      expr,
      `\\boxed{${e!.gold.target}}`,
      `\\boxed{${expr}}\\boxed{${expr}}`,
      `<answer>${expr}</answer>`,
      `\\boxed{${expr}`,
    ]) {
      expect((await task.score(e!, c)).terms.correct, c).toBe(0);
    }
  });
});

describe("task-specific checks", () => {
  it("addition answers are the sums", () => {
    for (const e of getTask("addition", { operands: 3, minDigits: 2, maxDigits: 4 }).generate("train", 50, 1)) {
      const xs = e.prompt.slice(0, -1).split("+").map(Number);
      expect(xs).toHaveLength(3);
      expect(String(xs.reduce((a, b) => a + b))).toBe(e.gold.answer);
      expect(e.goldCompletion).toBe(`\\boxed{${e.gold.answer}}`);
    }
  });
  it("countdown gold expressions use every number once and hit the target", () => {
    for (const e of getTask("countdown", { count: 4, maxNumber: 12 }).generate("test", 50, 1)) {
      const p = parseExpression(e.goldCompletion.slice("\\boxed{".length, -1));
      expect(p.value).toBe(e.gold.target);
      expect([...p.literals].sort()).toEqual([...e.gold.numbers].sort());
    }
  });
  it("countdown correctness term scores the gold 1 and a valid miss 0.1", async () => {
    const [e] = getTask("countdown").generate("train", 1, 3);
    const full = await rewards.score(
      "countdown-expression",
      { completion: e!.goldCompletion, gold: e!.gold },
      { region: "boxed" },
    );
    expect(full.score).toBe(1);
    const miss = `\\boxed{${e!.gold.numbers.join("+")}${e!.gold.target === e!.gold.numbers.reduce((a: number, b: number) => a + b) ? "*1" : ""}}`;
    const r = await rewards.score("countdown-expression", { completion: miss, gold: e!.gold }, { region: "boxed" });
    expect([0.1, 0]).toContain(r.score);
  });
  it("linear-equation answers solve the equation", () => {
    for (const e of getTask("linear-equation").generate("train", 50, 1)) {
      const m = /^Solve (\d*)x([+-]\d+)?=(\d+)\.$/.exec(e.prompt)!;
      const a = m[1] ? Number(m[1]) : 1;
      expect(a * Number(e.gold.answer) + Number(m[2] ?? 0)).toBe(Number(m[3]));
    }
  });
  it("arithmetic two-step problems have non-negative whole answers", () => {
    for (const e of getTask("arithmetic", { minSteps: 2, maxValue: 30 }).generate("train", 100, 1)) {
      expect(Number.isInteger(Number(e.gold.answer))).toBe(true);
      expect(Number(e.gold.answer)).toBeGreaterThanOrEqual(0);
    }
  });
  it("arithmetic with showWork: every step of the working is true, ends at the boxed answer, and scores in full", async () => {
    const task = getTask("arithmetic", { showWork: true });
    expect(task.maxNewTokens).toBeGreaterThanOrEqual(32);
    for (const e of task.generate("test", 60, 2)) {
      const m = /^(.*) \\boxed\{(\d+)\}$/.exec(e.goldCompletion)!;
      expect(m, e.goldCompletion).not.toBeNull();
      const steps = m[1]!.split(",").map((s) => /^(\d+)([-+*/])(\d+)=(\d+)$/.exec(s)!);
      for (const [, a, op, b, r] of steps) {
        const [x, y] = [Number(a), Number(b)];
        expect(
          ({ "+": x + y, "-": x - y, "*": x * y, "/": x / y } as Record<string, number>)[op!],
          e.goldCompletion,
        ).toBe(Number(r));
      }
      for (let i = 1; i < steps.length; i++) expect(steps[i]![1]).toBe(steps[i - 1]![4]); // each step starts from the last result
      expect(steps[steps.length - 1]![4]).toBe(e.gold.answer);
      expect(m[2]).toBe(e.gold.answer);
      const r = await task.score(e, e.goldCompletion);
      expect([r.terms.correct, r.terms.format, r.terms.working]).toEqual([1, 1, 1]);
      expect(r.firstErrorEnd).toBeUndefined();
    }
    const [e] = task.generate("test", 1, 5);
    const a = e!.gold.answer;
    const cases: [string, number, number][] = [
      [`1+1=${a}`, 0, 0], // the right number in the working but no box
      [`\\boxed{${a}}`, 1, 1], // the working is optional
      [`1+1=2 \\boxed{${Number(a) + 1}}`, 0, 1],
      [`1+1=${a} \\boxed{${a}} \\boxed{${Number(a) + 1}}`, 0, 0], // two boxes: the last counts, and the format fails
    ];
    for (const [c, correct, format] of cases) {
      const r = await task.score(e!, c);
      expect([r.terms.correct, r.terms.format], c).toEqual([correct, format]);
    }
  });
  it("arithmetic workShare: that share of gold completions shows the working, fixed per problem, both forms full score", async () => {
    const full = getTask("arithmetic", { showWork: true }).generate("train", 300, 4);
    expect(getTask("arithmetic", { showWork: true, workShare: 1 }).generate("train", 300, 4)).toEqual(full);
    const half = getTask("arithmetic", { showWork: true, workShare: 0.5 });
    const shows = (e: { goldCompletion: string }) => !e.goldCompletion.startsWith("\\boxed");
    for (const split of ["train", "test"] as const) {
      const ex = half.generate(split, split === "train" ? 2000 : 1000, 3);
      const share = ex.filter(shows).length / ex.length;
      expect(share).toBeGreaterThan(0.45);
      expect(share).toBeLessThan(0.55);
    }
    // the same problems as without workShare, the same answers; only the form differs
    const mixed = half.generate("train", 300, 4);
    mixed.forEach((e, i) => {
      expect(e.prompt).toBe(full[i]!.prompt);
      expect(e.gold).toEqual(full[i]!.gold);
      expect(e.goldCompletion).toBe(shows(e) ? full[i]!.goldCompletion : `\\boxed{${e.gold.answer}}`);
    });
    for (const e of mixed.slice(0, 40)) expect((await half.score(e, e.goldCompletion)).score).toBeCloseTo(1.2, 12);
    expect(getTask("arithmetic", { showWork: true, workShare: 0 }).generate("train", 50, 4).some(shows)).toBe(false);
    expect(() => getTask("arithmetic", { workShare: 0.5 })).toThrow(/workShare needs showWork/);
    expect(() => getTask("arithmetic", { showWork: true, workShare: 1.5 })).toThrow(/workShare/);
  });
  it("arithmetic with showWork: the weight-0 working term localises the first wrong step and leaves the score alone", async () => {
    const task = getTask("arithmetic", { showWork: true });
    const e = task.generate("train", 400, 1).find((x) => (x.gold as { steps: number[] }).steps.length === 2)!;
    const [s1, s2] = (e.gold as { steps: number[] }).steps as [number, number];
    const work = e.goldCompletion.slice(0, e.goldCompletion.indexOf(" \\boxed"));
    const [eq1, eq2] = work.split(",") as [string, string];
    // a wrong first result, carried on consistently: wrong answer, error ends after step 1
    const wrong1 = eq1.replace(/=\d+$/, `=${s1 + 1}`);
    const rest = eq2.replace(new RegExp(`^${s1}`), String(s1 + 1)).replace(/=\d+$/, "=");
    const r = await task.score(e, `${wrong1},${rest}999 \\boxed{999}`);
    expect([r.terms.correct, r.terms.working]).toEqual([0, 0]);
    expect(r.firstErrorEnd).toBe(wrong1.length);
    // right working, right answer: the score is the same as without the term (1 + 0.2)
    const ok = await task.score(e, e.goldCompletion);
    expect(ok.score).toBeCloseTo(1.2, 12);
    // a wrong second step, right box copied from nowhere: correct, half the working
    const lucky = await task.score(e, `${eq1},${eq2.replace(/=\d+$/, `=${s2 + 1}`)} \\boxed{${s2}}`);
    expect([lucky.terms.correct, lucky.terms.working]).toEqual([1, 0.5]);
    expect(lucky.firstErrorEnd).toBe(work.length + (String(s2 + 1).length - String(s2).length));
    // without showWork there is no working term and no gold steps
    const plain = getTask("arithmetic", {});
    expect(plain.terms.map((t) => t.name)).toEqual(["correct", "format"]);
    expect(plain.generate("train", 1, 1)[0]!.gold).not.toHaveProperty("steps");
  });
  it("countdown with showWork: true steps that end at the target, then the scored box", async () => {
    const task = getTask("countdown", { showWork: true, count: 4 });
    expect(task.maxNewTokens).toBeGreaterThanOrEqual(48);
    for (const e of task.generate("test", 60, 2)) {
      const m = /^(.*) \\boxed\{(.*)\}$/.exec(e.goldCompletion)!;
      expect(m, e.goldCompletion).not.toBeNull();
      const steps = m[1]!.split(",").map((s) => /^(\d+)([-+*/])(\d+)=(\d+)$/.exec(s)!);
      expect(steps).toHaveLength(3); // count − 1 combinations
      for (const [, a, op, b, r] of steps) {
        const [x, y] = [Number(a), Number(b)];
        expect(
          ({ "+": x + y, "-": x - y, "*": x * y, "/": x / y } as Record<string, number>)[op!],
          e.goldCompletion,
        ).toBe(Number(r));
      }
      expect(Number(steps[steps.length - 1]![4])).toBe(e.gold.target);
      expect(parseExpression(m[2]!).value).toBe(e.gold.target);
      const r = await task.score(e, e.goldCompletion);
      expect([r.terms.correct, r.terms.format]).toEqual([1, 1]);
    }
    const [e] = task.generate("test", 1, 5);
    const expr = /\\boxed\{(.*)\}$/.exec(e!.goldCompletion)![1]!;
    const cases: [string, number, number][] = [
      [`1+1=${e!.gold.target}`, 0, 0], // the target in the working, no box
      [`\\boxed{${expr}}`, 1, 1], // the working is optional
      [`1+1=2 \\boxed{${e!.gold.target}}`, 0, 1], // the target itself is not an expression of the numbers
    ];
    for (const [c, correct, format] of cases) {
      const r = await task.score(e!, c);
      expect([r.terms.correct, r.terms.format], c).toEqual([correct, format]);
    }
  });
  it("too small a problem space: the test split fails with a clear error, the train split repeats in order", () => {
    const small = getTask("addition", { maxDigits: 1 });
    expect(() => small.generate("test", 100, 1)).toThrow(/distinct test problems.*widen/);
    const train = small.generate("train", 200, 1);
    const distinct = new Set(train.map((e) => e.prompt)).size;
    expect(distinct).toBeGreaterThan(60); // 100 one-digit sums, about 80% of them train
    expect(distinct).toBeLessThan(100);
    expect(train[distinct]!.prompt).toBe(train[0]!.prompt);
    expect(new Set(train.map((e) => e.id)).size).toBe(200);
  });
  it("splitOf sends about 20% of keys to test", () => {
    let t = 0;
    for (let i = 0; i < 10000; i++) if (splitOf(`k${i}`) === "test") t++;
    expect(t / 10000).toBeGreaterThan(0.18);
    expect(t / 10000).toBeLessThan(0.22);
  });
});

describe("scoreTerms", () => {
  const terms = [
    { name: "correct", reward: "a", weight: 1 },
    { name: "format", reward: "b", weight: 0.2 },
    { name: "len", reward: "c", weight: 0 },
  ];
  it("weighted sum with unweighted per-term values", () => {
    const r = scoreTerms(terms, {
      correct: { score: 1, terms: {} },
      format: { score: 0.5, terms: {} },
      len: { score: -3, terms: {} },
    });
    expect(r.score).toBeCloseTo(1.1, 12);
    expect(r.terms).toEqual({ correct: 1, format: 0.5, len: -3 });
  });
  it("a null weighted term makes the score null but keeps the others", () => {
    const r = scoreTerms(terms, {
      correct: { score: null, terms: {}, info: { reason: "bad gold" } },
      format: { score: 1, terms: {} },
      len: { score: 0, terms: {} },
    });
    expect(r.score).toBeNull();
    expect(r.terms).toEqual({ format: 1, len: 0 });
    expect(r.info).toMatchObject({ nullTerms: ["correct"], terms: { correct: { reason: "bad gold" } } });
  });
  it("a null zero-weight term is logged only", () => {
    const r = scoreTerms(terms, {
      correct: { score: 0, terms: {} },
      format: { score: 1, terms: {} },
      len: { score: null, terms: {} },
    });
    expect(r.score).toBeCloseTo(0.2, 12);
  });
  it("the earliest firstErrorEnd of any term is kept, weight-0 terms included", () => {
    const r = scoreTerms(terms, {
      correct: { score: 0, terms: {}, firstErrorEnd: 9 },
      format: { score: 1, terms: {} },
      len: { score: 0, terms: {}, firstErrorEnd: 4 },
    });
    expect(r.firstErrorEnd).toBe(4);
    expect(scoreTerms(terms, { correct: { score: 0, terms: {} }, format: { score: 1, terms: {} } })).not.toHaveProperty(
      "firstErrorEnd",
    );
  });
  it("a missing or non-finite result is null", () => {
    expect(scoreTerms(terms, { correct: { score: NaN, terms: {} }, format: { score: 1, terms: {} } }).score).toBeNull();
  });
  it("scoreWithTerms runs the registry: a throwing checker gives null, an unknown reward throws", async () => {
    const reg = new RewardRegistry();
    reg.register({ name: "a", description: "", options: z.object({}), score: () => ({ score: 1, terms: {} }) });
    reg.register({
      name: "b",
      description: "",
      options: z.object({}),
      score: () => {
        throw new Error("boom");
      },
    });
    const r = await scoreWithTerms(terms.slice(0, 2), { completion: "x", gold: null }, { registry: reg });
    expect(r.score).toBeNull();
    expect(r.terms).toEqual({ correct: 1 });
    await expect(scoreWithTerms(terms, { completion: "x", gold: null }, { registry: reg })).rejects.toThrow(
      /unknown reward "c"/,
    );
  });
});
