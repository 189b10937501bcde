/**
 * `rlvr serve-rewards` in a child process (the CLI from source under tsx): it prints its address, answers /healthz,
 * takes the token from $RLVR_REWARD_TOKEN, and exits 0 on SIGTERM; a bad flag exits 2 naming the option.
 */
import { describe, expect, it } from "vitest";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { optionsFromFlags } from "../../src/cli/commands/serve-rewards.js";

const ROOT = resolve(__dirname, "..", "..");
const CLI = ["--import", "tsx", join(ROOT, "test/cli/run-cli.ts"), "serve-rewards"];

/** Starts the command and resolves with the child and the URL it printed. */
function launch(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ child: ChildProcess; url: string; out: () => string }> {
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
  let out = "";
  child.stderr!.on("data", (d) => (out += String(d)));
  return new Promise((resolveUrl, reject) => {
    child.stdout!.on("data", (d) => {
      out += String(d);
      const m = /listening on (http:\/\/\S+) /.exec(out);
      if (m) resolveUrl({ child, url: m[1]!, out: () => out });
    });
    child.once("exit", (code) => reject(new Error(`exited ${code} before listening:\n${out}`)));
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((r) => (child.exitCode !== null ? r(child.exitCode) : child.once("exit", (code) => r(code))));
}

describe("rlvr serve-rewards", () => {
  it("binds loopback, answers /healthz and exits 0 on SIGTERM", async () => {
    const { child, url, out } = await launch(["--port", "0", "--concurrency", "3"]);
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(url + "/healthz");
      expect(await res.json()).toEqual({ status: "ok" });
      const score = await fetch(url + "/v1/score", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ items: [{ reward: "math-answer", completion: "\\boxed{7}", example: { gold: "7" } }] }),
      });
      expect(((await score.json()) as { results: { score: number }[] }).results[0]!.score).toBe(1);
      child.kill("SIGTERM");
      expect(await exited(child)).toBe(0);
      expect(out()).toContain("SIGTERM: draining");
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("takes the token from RLVR_REWARD_TOKEN", async () => {
    const { child, url } = await launch(["--port", "0"], { RLVR_REWARD_TOKEN: "from-env" });
    try {
      expect((await fetch(url + "/v1/rewards")).status).toBe(401);
      expect((await fetch(url + "/v1/rewards", { headers: { authorization: "Bearer from-env" } })).status).toBe(200);
      child.kill("SIGINT");
      expect(await exited(child)).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("a bad flag exits 2 with a message naming the option", () => {
    const r = spawnSync(process.execPath, [...CLI, "--max-items", "lots"], { cwd: ROOT, encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("maxItems");
  });

  it("flags become options: numbers parsed, --token over the environment", () => {
    expect(optionsFromFlags({ port: "0", maxItems: "12", host: "::1" }, {})).toEqual({
      port: 0,
      maxItems: 12,
      host: "::1",
    });
    expect(optionsFromFlags({}, { RLVR_REWARD_TOKEN: "e" })).toEqual({ token: "e" });
    expect(optionsFromFlags({ token: "f" }, { RLVR_REWARD_TOKEN: "e" })).toEqual({ token: "f" });
    expect(Number.isNaN(optionsFromFlags({ concurrency: "" }, {}).concurrency)).toBe(true);
  });
});
