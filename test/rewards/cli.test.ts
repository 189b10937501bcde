/** `rlvr rewards` and `rlvr reward <name> --example --completion` (src/cli/commands/rewards.ts). */
import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { describeOptions, inputFromExample, register } from "../../src/cli/commands/rewards.js";
import { rewards } from "../../src/rewards/index.js";

async function run(...args: string[]): Promise<{ out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
  vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void err.push(a.join(" ")));
  const program = new Command("rlvr").exitOverride();
  register(program);
  await program.parseAsync(["node", "rlvr", ...args]);
  return { out: out.join("\n"), err: err.join("\n") };
}

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = 0;
});

describe("rlvr rewards / reward", () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-rewards-cli-"));
  const file = (name: string, text: string): string => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it("lists every reward with its description and options", async () => {
    const { out } = await run("rewards");
    expect(out).toContain("math-answer: Maths final answer");
    expect(out).toMatch(/floatRounding <integer> \(default 6\)/);
    const json = JSON.parse((await run("rewards", "--json")).out) as { name: string }[];
    expect(json.map((r) => r.name)).toEqual(rewards.list().map((r) => r.name));
  });
  it("scores a completion and prints score and terms", async () => {
    const ex = file("ex.json", JSON.stringify({ gold: "\\frac{1}{2}" }));
    const c = file("c.txt", "<think>hmm</think> The final answer is $\\boxed{0.5}$.");
    const { out } = await run("reward", "math-answer", "--example", ex, "--completion", c);
    expect(out).toContain("score:  1");
    expect(out).toContain("correct: 1");
    const json = JSON.parse(
      (
        await run(
          "reward",
          "math-answer",
          "--example",
          ex,
          "--completion",
          c,
          "--options",
          '{"floatRounding":0}',
          "--json",
        )
      ).out,
    );
    expect(json).toMatchObject({ reward: "math-answer", score: 1, terms: { correct: 1 } });
  });
  it("a raw gold file and token ids in the example are accepted", async () => {
    expect(inputFromExample("42", "x")).toEqual({ completion: "x", gold: "42" });
    expect(inputFromExample({ gold: 1, tokens: [1, 2], turns: ["a"], prompt: "p" }, "x")).toEqual({
      completion: "x",
      gold: 1,
      tokens: [1, 2],
      turns: ["a"],
      prompt: "p",
    });
    const ex = file("tok.json", JSON.stringify({ gold: null, tokens: new Array(5000).fill(0) }));
    const { out } = await run("reward", "overlong", "--example", ex, "--completion", file("e.txt", ""));
    expect(out).toContain("score:  -1");
  });
  it("bad input names the problem and sets exit code 2", async () => {
    const c = file("c2.txt", "x");
    expect((await run("reward", "nope", "--example", c, "--completion", c)).err).toMatch(
      /unknown reward "nope"; known: .*math-answer/,
    );
    expect((await run("reward", "math-answer", "--example", c, "--completion", c)).err).toMatch(
      /--example: .* is not valid JSON/,
    );
    expect(
      (
        await run(
          "reward",
          "math-answer",
          "--example",
          file("g.json", '"1"'),
          "--completion",
          c,
          "--options",
          '{"mode":"wild"}',
        )
      ).err,
    ).toMatch(/--options for math-answer: mode/);
    expect(process.exitCode).toBe(2);
  });
  it("describeOptions reads defaults and descriptions from the zod schema", () => {
    const opts = describeOptions(rewards.get("box-detection"));
    expect(opts.find((o) => o.name === "iouThreshold")).toMatchObject({ type: "number", default: 0.5 });
  });
});
