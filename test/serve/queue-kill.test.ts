/**
 * Worker processes that die or stop while they hold jobs (real child processes on a live Redis; skipped with a
 * message when none answers, unless RLVR_REQUIRE_REDIS=1). A worker SIGKILLed with two jobs in hand loses nothing:
 * BullMQ's stalled-job check (short lock settings here) hands those jobs to a second worker, and the request gets
 * exactly one result per item, in order. A job that loses its worker more often than maxStalled allows fails, and its
 * item answers reward-failed. A job's finished items are saved as it runs, so the worker that takes it over scores only
 * the rest. A worker sent SIGTERM with a job in hand finishes it, then exits 0.
 */
import { afterEach, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { RewardRegistry } from "../../src/rewards/index.js";
import { startRewardServer, startRewardWorker, type RunningRewardServer } from "../../src/serve/index.js";
import { get, metric, post } from "./helpers.js";
import { dropQueue, exited, queueName, REDIS_URL, redisAvailable, slowItem, slowRegistry } from "./queue-helpers.js";

const up = await redisAvailable();
const CHILD = join(resolve(__dirname), "queue-worker-child.ts");

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** A worker process on `queue`: its output lines so far, and a wait for a line. */
interface Child {
  proc: ChildProcess;
  lines: string[];
  waitFor(check: (lines: string[]) => boolean): Promise<void>;
}

function worker(queue: string, concurrency: number, progressMs = 1000): Child {
  const proc = spawn(process.execPath, [
    "--import",
    "tsx",
    CHILD,
    REDIS_URL,
    queue,
    String(concurrency),
    "1000",
    "500",
    String(progressMs),
  ]);
  const lines: string[] = [];
  let out = "";
  let waiters: (() => void)[] = [];
  const onData = (d: Buffer) => {
    out += String(d);
    const parts = out.split("\n");
    out = parts.pop()!;
    lines.push(...parts.filter((l) => l.trim()));
    for (const w of waiters) w();
  };
  proc.stdout!.on("data", onData);
  let err = "";
  proc.stderr!.on("data", (d) => (err += String(d)));
  cleanup.push(async () => {
    proc.kill("SIGKILL");
    await exited(proc);
  });
  const waitFor = (check: (lines: string[]) => boolean) =>
    new Promise<void>((resolveWait, reject) => {
      const test = () => {
        if (!check(lines)) return;
        waiters = waiters.filter((w) => w !== test);
        resolveWait();
      };
      waiters.push(test);
      proc.once("exit", (code) => reject(new Error(`worker exited ${code}: ${lines.join(" | ")} ${err}`)));
      test();
    });
  return { proc, lines, waitFor };
}

const values = (lines: string[], kind: "start" | "end") =>
  lines.filter((l) => l.startsWith(kind + " ")).map((l) => Number(l.split(" ")[1]));

async function server(queue: string, jobItems = 1): Promise<RunningRewardServer> {
  const { registry } = slowRegistry();
  const s = await startRewardServer({
    port: 0,
    keepPool: true,
    redis: REDIS_URL,
    queue,
    rewards: registry,
    jobItems,
  });
  cleanup.push(async () => {
    await s.close();
    await dropQueue(queue);
  });
  return s;
}

describe.skipIf(!up)("worker processes that die or stop mid-job", () => {
  it("a worker SIGKILLed with jobs in hand loses nothing: another worker takes them, one result per item", async () => {
    const q = queueName("kill");
    const s = await server(q);
    const a = worker(q, 2);
    await a.waitFor((l) => l.includes("ready"));
    const items = [0, 1, 2, 3, 4, 5].map((v) => slowItem(800, v));
    const pending = post(s, "/v1/score", { items });
    await a.waitFor((l) => values(l, "start").length === 2);
    a.proc.kill("SIGKILL");
    await exited(a.proc);
    const killedMidJob = values(a.lines, "start").filter((v) => !values(a.lines, "end").includes(v));
    expect(killedMidJob).toHaveLength(2);

    const b = worker(q, 3);
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual(items.map((_, v) => ({ score: v, terms: { value: v } })));
    // The second worker scored every item the first did not finish, each once: the two killed jobs among them.
    const ended = values(b.lines, "end");
    expect([...ended].sort()).toEqual([0, 1, 2, 3, 4, 5].filter((v) => !values(a.lines, "end").includes(v)));
    for (const v of killedMidJob) expect(ended).toContain(v);
    expect(metric((await get(s, "/metrics")).text, "rlvr_serve_queue_awaiting")).toBe(0);
    b.proc.kill("SIGTERM");
    expect(await exited(b.proc)).toBe(0);
  });

  it("a job taken over after its worker died scores only the items the dead worker had not saved", async () => {
    const q = queueName("resume");
    const s = await server(q, 4); // one job of 4 items
    const a = worker(q, 1, 100);
    await a.waitFor((l) => l.includes("ready"));
    const items = [slowItem(50, 0), slowItem(50, 1), slowItem(60_000, 2), slowItem(60_000, 3)];
    const pending = post(s, "/v1/score", { items });
    // Items 0 and 1 finish at once, 2 and 3 would take a minute: kill the worker once it has saved the first two.
    await a.waitFor((l) => l.includes("saved 2"));
    a.proc.kill("SIGKILL");
    await exited(a.proc);
    expect(values(a.lines, "end")).toEqual([0, 1]);

    // The next worker scores 2 and 3 quickly (its own registry: same reward, no wait), and never 0 or 1.
    const { registry } = slowRegistry();
    const scored: number[] = [];
    const fast = new RewardRegistry();
    fast.register({
      ...registry.get("slow"),
      score: (_input, o: { value: number }) => {
        scored.push(o.value);
        return { score: o.value, terms: { value: o.value } };
      },
    });
    const b = await startRewardWorker({
      redis: REDIS_URL,
      queue: q,
      rewards: fast,
      keepPool: true,
      lockMs: 1000,
      stalledIntervalMs: 500,
    });
    cleanup.push(() => b.close());
    const res = await pending;
    expect(res.body.results).toEqual([0, 1, 2, 3].map((v) => ({ score: v, terms: { value: v } })));
    expect(scored.sort()).toEqual([2, 3]);
  });

  it("a job that has lost its worker more than maxStalled times fails: its items answer reward-failed", async () => {
    const q = queueName("poison");
    const s = await server(q);
    const a = worker(q, 1);
    await a.waitFor((l) => l.includes("ready"));
    const pending = post(s, "/v1/score", { items: [slowItem(5000, 1)] });
    await a.waitFor((l) => l.includes("start 1"));
    a.proc.kill("SIGKILL");
    await exited(a.proc);
    // The next worker allows no stalls (maxStalled 0), as if this job had already killed its quota of workers.
    const { registry, calls } = slowRegistry();
    const b = await startRewardWorker({
      redis: REDIS_URL,
      queue: q,
      rewards: registry,
      keepPool: true,
      maxStalled: 0,
      lockMs: 1000,
      stalledIntervalMs: 500,
    });
    cleanup.push(() => b.close());
    const res = await pending;
    expect(res.body.results[0].error.code).toBe("reward-failed");
    expect(res.body.results[0].error.message).toMatch(/^the item's job failed on the workers: .*stalled/);
    expect(calls()).toBe(0);
  });

  it("SIGTERM finishes the job in hand, answers the request, and exits 0", async () => {
    const q = queueName("term");
    const s = await server(q);
    const w = worker(q, 1);
    await w.waitFor((l) => l.includes("ready"));
    const pending = post(s, "/v1/score", { items: [slowItem(600, 9)] });
    await w.waitFor((l) => l.includes("start 9"));
    w.proc.kill("SIGTERM");
    expect((await pending).body.results).toEqual([{ score: 9, terms: { value: 9 } }]);
    expect(await exited(w.proc)).toBe(0);
    expect(w.lines).toContain("end 9");
  });
});
