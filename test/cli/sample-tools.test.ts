/**
 * `rlvr sample` through the CLI's `main()` on tiny checkpoints: for a task with an environment (SAKE's kg-tools) it
 * runs training's episode loop, so tool calls are executed and their answers inserted, and it prints the segments;
 * bad input ends an episode with its errors printed; a single-turn task prints what `sample()` draws, as before.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { main } from "../../src/cli/index.js";
import { saveModel } from "../../src/models/checkpoint.js";
import { createModel } from "../../src/models/registry.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import "../../src/rewards/index.js";
import { sample } from "../../src/sampling/sample.js";
import { promptIds } from "../../src/rollout/groups.js";
import { getTask } from "../../src/tasks/index.js";
import { trainSft } from "../../src/trainer/sft.js";
import { Rng } from "../../src/util/index.js";

const tok = new CharTokenizer();
const dir = mkdtempSync(join(tmpdir(), "rlvr-sample-tools-"));
const TAUGHT = join(dir, "taught"); // memorised the gold of sake's first held-out question (masked SFT)
const RANDOM = join(dir, "random"); // untrained
const sake = getTask("sake");
const [question] = sake.generate("test", 1, 0); // what `rlvr sample --task sake --count 1` asks (seed 0)

async function cli(...args: string[]): Promise<string[]> {
  const out: string[] = [];
  const spy = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
  try {
    await main(["node", "rlvr", ...args]);
  } finally {
    spy.mockRestore();
  }
  expect(process.exitCode ?? 0).toBe(0);
  return out;
}

beforeAll(() => {
  const taught = createModel("micro-char", new Rng(1), { maxSeqLen: 384 }).model;
  const gold = { prompt: question!.prompt, completion: question!.goldCompletion, segments: question!.goldSegments! };
  trainSft(taught, tok, [gold], { steps: 150, batchSize: 1, lr: 1e-2, rng: new Rng(2) });
  saveModel(TAUGHT, taught.eval(), tok);
  saveModel(RANDOM, createModel("micro-char", new Rng(3), { maxSeqLen: 384 }).model.eval(), tok);
});

afterEach(() => {
  process.exitCode = undefined;
});

describe("rlvr sample with tools", () => {
  it("runs the kg-tools episode: the model's calls are answered by the tools and printed as segments", async () => {
    const out = await cli("sample", TAUGHT, "--task", "sake", "--count", "1", "--temperature", "0");
    expect(out[0]).toBe(`--- sake/test/0: ${JSON.stringify(question!.prompt)}`);
    // three model turns, two tool answers; full reward (format and exact match under sake3b)
    expect(out[1]).toMatch(/^\[stop, \d+ tokens, 3 turns\] reward 1 \{"kg":1,"em":1\}$/);
    const segs = question!.goldSegments!;
    // the taught model never trained on the tool output (masked): the inserted lines are the environment's answers
    expect(out.slice(2)).toEqual(
      segs.map((s) => `  ${s.kind === "model" ? "model   " : "inserted"} ${JSON.stringify(s.text)}`),
    );
    expect(segs.filter((s) => s.kind === "inserted").every((s) => s.text.includes("<info>"))).toBe(true);
  });

  it("an untrained model's bad input ends its episodes with the errors printed and the environment's reward", async () => {
    const out = await cli("sample", RANDOM, "--task", "sake", "--count", "2", "-n", "2", "--seed", "4");
    const heads = out.filter((l) => l.startsWith("["));
    expect(out.filter((l) => l.startsWith("---"))).toHaveLength(2);
    expect(heads).toHaveLength(4);
    for (const h of heads) {
      expect(h).toMatch(/, \d+ turns?[,\]]/);
      // no valid call from random tokens: an error is counted (reward 0) or a budget cut the episode
      expect(/errors: \[".+"\]\] reward 0 \{\}$/.test(h) || /truncated: /.test(h), h).toBe(true);
    }
    expect(out.some((l) => l.startsWith("  model    "))).toBe(true);
  });

  it("a single-turn task prints exactly what sample() draws, scored; --prompt prints one unscored turn", async () => {
    const add = getTask("addition");
    const examples = add.generate("test", 2, 0);
    const out = await cli("sample", RANDOM, "--task", "addition", "--count", "2", "-n", "2", "--seed", "5");
    const { model } = createModel("micro-char", new Rng(3), { maxSeqLen: 384 });
    const rows = examples.flatMap((e) => [promptIds(tok, e.prompt), promptIds(tok, e.prompt)]);
    const want = sample(model.eval(), tok, rows, {
      maxNewTokens: add.maxNewTokens ?? 64,
      temperature: 1,
      ...(add.stop ? { stop: add.stop } : {}),
      rng: new Rng(5),
    });
    const lines = out.filter((l) => !l.startsWith("---"));
    expect(lines).toHaveLength(4);
    lines.forEach((l, i) =>
      expect(
        l.startsWith(
          `${JSON.stringify(want[i]!.text)} [${want[i]!.finishReason}, ${want[i]!.tokens.length} tokens] reward `,
        ),
        l,
      ).toBe(true),
    );
    const p = await cli("sample", RANDOM, "--prompt", "Q: does", "--max-new-tokens", "5", "--seed", "1");
    expect(p[0]).toBe('--- prompt: "Q: does"');
    expect(p[1]).toMatch(/^".*" \[(stop|length), \d tokens\]$/);
  });
});
