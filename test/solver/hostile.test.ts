/**
 * Hostile SIRL programs through every path a trainer uses: `scoreSirl`, `rewards.score`, `task.score` and the
 * `rlvr reward` command. A program that makes V8 abort, or one that V8 cannot interrupt, costs only its worker
 * process: the completion gets the failure score (format only; never `null`, which would hide it), the pool counts
 * the crash, the other completions of the batch are scored as usual, and the calling process lives on.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { rewards } from "../../src/rewards/registry.js";
import { closeSharedPool, sharedPool } from "../../src/rewards/sandbox/pool.js";
import { scoreSirl } from "../../src/rewards/solver/reward.js";
import { createOptimisationTask } from "../../src/tasks/optimisation.js";

afterAll(() => closeSharedPool());

const wrap = (code: string) => `<think>t</think>\n<model>m</model>\n<code>\n\`\`\`js\n${code}\n\`\`\`\n</code>`;
const honest = `const m = new Model("maximize"); m.addConstraint({ x: 3, y: 2 }, "<=", 40, "l");
m.addConstraint({ x: 1 }, "<=", 10, "c"); m.setObjective({ x: 5, y: 4 }); return m;`;
const GOLD = { objective: 80 };
// A small heap makes V8 abort quickly; a short limit makes the uninterruptible ones cheap to wait out.
const OPTS = { memoryMb: 16, timeoutMs: 1500 };

const ATTACKS = [
  "const m = new Map(); for (let i = 0;; i++) m.set(i, i);",
  "const s = new Set(); for (let i = 0;; i++) s.add(i);",
  "return new Array(1e8).fill(0).length;",
  "return new Array(2 ** 32 - 1).indexOf(1);",
  "const e = new Error('x'); Object.defineProperty(e, 'message', { get() { for (;;) {} } }); throw e;",
];

describe("hostile SIRL programs", () => {
  it("each earns the failure score in a batch whose honest completions are all paid", async () => {
    const completions = ATTACKS.flatMap((a) => [wrap(a), wrap(honest)]);
    const results = await Promise.all(completions.map((c) => scoreSirl(c, GOLD, OPTS)));
    for (let i = 0; i < ATTACKS.length; i++) {
      expect(results[2 * i + 1], "honest neighbour").toMatchObject({ score: 3.5 });
      const r = results[2 * i]!;
      expect(r, ATTACKS[i]).toMatchObject({ score: 0.5, terms: { format: 1, runs: 0, objective: 0 } });
      expect(String(r.info?.reason), ATTACKS[i]).toMatch(/memory|timeout|deadline|crashed/);
    }
    // At least one abort really happened and was counted (not silently retried or dropped).
    expect(sharedPool().stats.crashed + sharedPool().stats.timeouts).toBeGreaterThanOrEqual(1);
  });

  it("rewards.score and task.score give the same failure score", async () => {
    const bomb = wrap(ATTACKS[1]!.replace("s.add(i)", "s.add('k' + i)"));
    const viaRegistry = await rewards.score("sirl", { completion: bomb, gold: GOLD }, OPTS);
    expect(viaRegistry).toMatchObject({ score: 0.5, terms: { runs: 0 } });
    const task = createOptimisationTask();
    const [example] = task.generate("train", 1, 3);
    const viaTask = await task.score(example!, wrap(ATTACKS[3]!));
    expect(viaTask.score).not.toBeNull();
    expect(viaTask.terms).toMatchObject({ runs: 0, objective: 0 });
  });

  it("`rlvr reward sirl` prints the failure score and exits", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-hostile-"));
    writeFileSync(join(dir, "example.json"), JSON.stringify({ gold: GOLD }));
    writeFileSync(join(dir, "completion.txt"), wrap(ATTACKS[0]!));
    const cli = new URL("../cli/run-cli.ts", import.meta.url).pathname;
    const files = ["--example", join(dir, "example.json"), "--completion", join(dir, "completion.txt")];
    const args = ["tsx", cli, "reward", "sirl", ...files, "--json", "--options", JSON.stringify(OPTS)];
    const { stdout } = await promisify(execFile)("npx", args, { timeout: 60_000 });
    expect(JSON.parse(stdout)).toMatchObject({ reward: "sirl", score: 0.5, terms: { runs: 0 } });
  });
});
