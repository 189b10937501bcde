/**
 * The Python client (clients/python/rlvr_client.py) against a real server on loopback: runs
 * clients/python/test_rlvr_client.py, which checks the token, batching, the TRL reward function (None for
 * unscorable, a clear exception for an unknown reward or bad options), the verl adapter, the timeout, a retry after
 * a 429's Retry-After and a refused connection. Node opens the `wait` reward's gate once it has seen the 429, so the
 * retry is what gets the request in. Skipped, with a message, when `python3` is not on the PATH: `npm test` never
 * needs Python.
 */
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rewards } from "../../src/rewards/index.js";
import type { RunningRewardServer } from "../../src/serve/index.js";
import { gate, metric, start, testRegistry, until } from "./helpers.js";

const SCRIPT = join(import.meta.dirname, "..", "..", "clients", "python", "test_rlvr_client.py");
const PYTHON = process.env.RLVR_TEST_PYTHON ?? "python3";
const havePython = spawnSync(PYTHON, ["--version"], { encoding: "utf8" }).status === 0;
if (!havePython) console.warn(`client-python.test.ts: skipped: no ${PYTHON} on the PATH (RLVR_TEST_PYTHON names one)`);

const TOKEN = "py-client-token";
const release = gate(); // the `wait` reward's gate: opened on the first 429
const hang = gate(); // the `hang` reward's gate: opened after the run (the client gives up first)

let server: RunningRewardServer;
beforeAll(async () => {
  if (!havePython) return;
  const { registry } = testRegistry(release.promise);
  registry.register(rewards.get("math-answer"));
  registry.register({
    name: "count-tokens",
    description: "test: the number of completion token ids sent",
    options: z.object({}).strict(),
    score: ({ tokens }) => ({ score: tokens?.length ?? null, terms: {} }),
  });
  registry.register({
    name: "hang",
    description: "test: answers only after the test ends",
    options: z.object({}).strict(),
    score: async () => (await hang.promise, { score: 0, terms: {} }),
  });
  server = await start({ rewards: registry, token: TOKEN, concurrency: 1 });
});
afterAll(async () => {
  release.open();
  hang.open();
  await server?.close();
});

/** Runs the script; resolves with its exit code, stdout and stderr, without blocking the server's event loop. */
function runScript(): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, RLVR_TEST_URL: server.url, RLVR_TEST_TOKEN: TOKEN, PYTHONDONTWRITEBYTECODE: "1" };
    const child = spawn(PYTHON, [SCRIPT], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (err += b.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

describe.skipIf(!havePython)("Python client against a real server", () => {
  it("passes every check of test_rlvr_client.py", async () => {
    let finished = false;
    const run = runScript().finally(() => (finished = true));
    const busy = async () =>
      metric(await server.metrics.registry.metrics(), "rlvr_serve_requests_total", {
        route: "/v1/score",
        status: "429",
      }) >= 1;
    await until(async () => finished || (await busy()), 4000); // bounded: ~20 s; a failed script ends the wait
    release.open();
    const { code, out, err } = await run;
    expect(code, `python failed:\n${out}\n${err}`).toBe(0);
    const ok = out.split("\n").filter((l) => l.startsWith("ok "));
    expect(ok).toEqual([
      "ok token",
      "ok batching",
      "ok trl_reward",
      "ok bad_reward",
      "ok verl",
      "ok timeout",
      "ok retry_after_429",
      "ok unreachable",
      "ok request_id",
    ]);
  }, 30_000);
});
