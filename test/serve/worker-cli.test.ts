/**
 * `rlvr reward-worker` and `rlvr serve-rewards --redis` as commands (the CLI from source under tsx): bad flags exit 2
 * naming the option, an unreachable Redis exits 1 naming the URL (neither needs Redis), and with a live Redis a
 * server process and a worker process score a request together and both exit 0 on SIGTERM.
 */
import { describe, expect, it } from "vitest";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { workerOptionsFromFlags } from "../../src/cli/commands/reward-worker.js";
import { optionsFromFlags } from "../../src/cli/commands/serve-rewards.js";
import { parseServeOptions, parseWorkerOptions } from "../../src/serve/index.js";
import { dropQueue, exited, freePort, queueName, REDIS_URL, redisAvailable } from "./queue-helpers.js";

const ROOT = resolve(__dirname, "..", "..");
const CLI = ["--import", "tsx", join(ROOT, "test/cli/run-cli.ts")];
const up = await redisAvailable();

function run(args: string[]) {
  return spawnSync(process.execPath, [...CLI, ...args], { cwd: ROOT, encoding: "utf8", timeout: 30_000 });
}

describe("rlvr reward-worker: refusals", () => {
  it("a bad flag exits 2 naming the option", () => {
    const r = run(["reward-worker", "--redis", "redis://127.0.0.1:6379", "--concurrency", "lots"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("rlvr: reward worker options: concurrency: ");
  });

  it.each([
    [{ redis: "redis://127.0.0.1:6379", lockMs: "5" }, "lockMs"],
    [{ redis: "redis://127.0.0.1:6379", queue: "a:b" }, "queue"],
    [{ redis: "redis://127.0.0.1:6379", maxStalled: "-1" }, "maxStalled"],
    [{ concurrency: "2" }, "redis"],
    [{ redis: "http://127.0.0.1:6379" }, "redis"],
  ])("flags %j are refused naming %s (the message the command prints before exiting 2)", (flags, field) => {
    expect(() => parseWorkerOptions(workerOptionsFromFlags(flags))).toThrow(`reward worker options: ${field}: `);
  });

  it("an unreachable Redis exits 1 naming the URL", async () => {
    const port = await freePort();
    const r = run(["reward-worker", "--redis", `redis://127.0.0.1:${port}`]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `rlvr: reward-worker: cannot reach Redis at redis://127.0.0.1:${port}: connect ECONNREFUSED`,
    );
  });

  it("flags become options: numbers parsed, names kept", () => {
    expect(workerOptionsFromFlags({ redis: "redis://h:1", queue: "q", concurrency: "3", lockMs: "" })).toEqual({
      redis: "redis://h:1",
      queue: "q",
      concurrency: 3,
      lockMs: NaN,
    });
  });
});

describe("rlvr serve-rewards --redis: refusals", () => {
  it("an unreachable Redis exits 1 naming the URL; bad queue flags are refused naming them", async () => {
    const port = await freePort();
    const r = run(["serve-rewards", "--port", "0", "--redis", `redis://127.0.0.1:${port}`]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `rlvr: serve-rewards: cannot reach Redis at redis://127.0.0.1:${port}: connect ECONNREFUSED`,
    );
    const bad = optionsFromFlags({ redis: `redis://127.0.0.1:${port}`, queueGraceMs: "-1", queue: "q" }, {});
    expect(() => parseServeOptions(bad)).toThrow("reward service options: queueGraceMs: ");
    expect(() => parseServeOptions({ redis: "127.0.0.1:6379" })).toThrow("reward service options: redis: ");
  });
});

/** Starts a CLI command and resolves once a stdout line matches `ready`. */
function launch(
  args: string[],
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray; out: () => string }> {
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: ROOT });
  let out = "";
  child.stderr!.on("data", (d) => (out += String(d)));
  return new Promise((resolveLaunch, reject) => {
    child.stdout!.on("data", (d) => {
      out += String(d);
      const m = ready.exec(out);
      if (m) resolveLaunch({ child, match: m, out: () => out });
    });
    child.once("exit", (code) => reject(new Error(`exited ${code} before it was ready:\n${out}`)));
  });
}

describe.skipIf(!up)("rlvr serve-rewards --redis with rlvr reward-worker", () => {
  it("score a request together, and both exit 0 on SIGTERM", async () => {
    const q = queueName("cli");
    const children: ChildProcess[] = [];
    try {
      const server = await launch(
        ["serve-rewards", "--port", "0", "--redis", REDIS_URL, "--queue", q],
        /listening on (http:\/\/\S+) /,
      );
      children.push(server.child);
      expect(server.out()).toContain(`queue "${q}" at ${REDIS_URL}`);
      const worker = await launch(
        ["reward-worker", "--redis", REDIS_URL, "--queue", q, "--concurrency", "2"],
        /consuming/,
      );
      children.push(worker.child);
      const res = await fetch(server.match[1] + "/v1/score", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ items: [{ reward: "math-answer", completion: "\\boxed{7}", example: { gold: "7" } }] }),
      });
      expect(((await res.json()) as { results: { score: number }[] }).results[0]!.score).toBe(1);
      worker.child.kill("SIGTERM");
      expect(await exited(worker.child)).toBe(0);
      expect(worker.out()).toContain("reward worker stopped after 1 jobs");
      server.child.kill("SIGTERM");
      expect(await exited(server.child)).toBe(0);
    } finally {
      for (const c of children) c.kill("SIGKILL");
      await dropQueue(q);
    }
  });
});
