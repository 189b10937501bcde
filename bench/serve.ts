/**
 * Load and faults of the reward service through its Redis queue (issue 17 "Load and faults"), all on loopback: a
 * private memory-only redis-server on a free port, `rlvr serve-rewards --redis` and `rlvr reward-worker` as child
 * processes, and this process as the client. Phases:
 *   1. in process: the same maths items scored by `rewards.score` on this thread (the bench:rewards baseline; the
 *      median of 3 warm passes);
 *   2. fault-free: maths items in turns (each turn scores its share in process first, the service idle, then through
 *      the service), then sandboxed solver (sirl) items, with 1, 2 and 4 workers;
 *   3. faults: the same with 2 workers while one worker is SIGKILLed (and replaced) every few seconds and Redis is
 *      killed and restarted (empty) once, halfway through the maths items.
 * Every result is compared with the in-process one for its item. Metrics (JSON lines, `{bench, metric, value,
 * unit}`): serve.lost (items without their right result: missing, an item error, or another score),
 * serve.duplicated (results beyond one per item), serve.math_throughput_ratio (service maths items/s over in-process
 * items/s on the same items, per turn; the median of the turns at the best worker count), serve.p99_ms and
 * serve.p50_ms (per request), serve.rss_growth_mb (server RSS, mean over the last 10,000 maths items minus the first
 * 10,000), serve.solver_items_per_s; the fault run's under serve.faults.*.
 * Targets: zero lost and duplicated, ratio >= 0.5, RSS growth ~0.
 *
 * Departures: requests carry `BATCH` items each with `INFLIGHT` in flight (a trainer sends a step's completions at
 * once); latency is per request. The fault run's items use the server's default 60 s item limit and the workers'
 * default lock settings (3 s lock, 1 s stall check), so a killed worker's jobs come back after about 3-4 s.
 * Run: npm run bench:serve (needs redis-server on PATH); BENCH_SERVE_SMOKE=1 runs a tiny version in about a minute.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { main } from "../src/cli/index.js";
import type * as RewardsModule from "../src/rewards/index.js";
import { probeRedis, type ItemResult, type ScoreItem } from "../src/serve/index.js";
import type * as ServeModule from "../src/serve/index.js";
import { Rng } from "../src/util/index.js";
import { rssFloors } from "./harness/memory.js";

const SELF = resolve(import.meta.dirname ?? ".", "serve.ts");
const ROOT = resolve(import.meta.dirname ?? ".", "..");

/** Whether every .ts file under src/ has its compiled .js in dist/, written after the source was last changed. */
function distIsFresh(): boolean {
  const src = join(ROOT, "src");
  for (const e of readdirSync(src, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !e.name.endsWith(".ts") || e.name.endsWith(".d.ts")) continue;
    const from = join(e.parentPath, e.name);
    const to = join(ROOT, "dist", relative(src, from)).replace(/\.ts$/, ".js");
    if (!existsSync(to) || statSync(to).mtimeMs < statSync(from).mtimeMs) return false;
  }
  return true;
}

/**
 * How the children start: `bin/rlvr.js` (the compiled dist/, as `rlvr serve-rewards` runs for users) when dist/ is
 * up to date with src/, else this file under tsx, whose transpiled code is a little slower (esbuild's `__name`
 * wrappers were about 1% of a worker's time in a V8 profile) and starts slower.
 */
const COMPILED = distIsFresh();
const CHILD_ENTRY: string[] = (() => {
  if (COMPILED) return [join(ROOT, "bin", "rlvr.js")];
  console.log(
    "  (dist/ is older than src/: the service runs from source under tsx; `npm run build` to run it compiled)",
  );
  return ["--import", "tsx", SELF, "--as-cli"];
})();

const SMOKE = process.env.BENCH_SERVE_SMOKE === "1";
const env = process.env;
const SIZE = SMOKE
  ? { math: 600, solver: 8, workers: [1, 2], window: 150, killEveryMs: 3000, soak: 2400 }
  : {
      math: Number(env.BENCH_SERVE_MATH ?? 50_000),
      solver: Number(env.BENCH_SERVE_SOLVER ?? 2_000),
      workers: (env.BENCH_SERVE_WORKERS ?? "1,2,4").split(",").map(Number),
      window: Math.min(10_000, Math.floor(Number(env.BENCH_SERVE_MATH ?? 50_000) / 5)),
      soak: Number(env.BENCH_SERVE_SOAK ?? 200_000),
      killEveryMs: 4000,
    };
/** Extra server flags for experiments, e.g. BENCH_SERVE_SERVER_ARGS="--job-items 64"; empty for the reported run. */
const SERVER_ARGS = (env.BENCH_SERVE_SERVER_ARGS ?? "").split(" ").filter(Boolean);
/** Extra worker flags for experiments, e.g. BENCH_SERVE_WORKER_ARGS="--lock-ms 3000"; empty for the reported run. */
const WORKER_ARGS = (env.BENCH_SERVE_WORKER_ARGS ?? "").split(" ").filter(Boolean);
/** BENCH_SERVE_NO_FAULTS=1 skips the fault run (for profiling the fault-free path). */
const FAULTS = env.BENCH_SERVE_NO_FAULTS !== "1";
const BATCH = SMOKE ? 50 : 256;
/** Timed passes of in-process scoring before the service runs; `serve.in_process_math_items_per_s` is their median. */
const IN_PROCESS_PASSES = 3;
/**
 * Turns of a fault-free maths phase: each turn scores its share of the items in process (this thread, the service
 * idle), then through the service, so the ratio is taken per turn. On a quiet machine the in-process rate alone read
 * 38,000 to 52,000 items/s in runs a minute apart (docs/reward-service.md), more than the effect being measured.
 */
const TURNS = SMOKE ? 2 : 5;
const INFLIGHT = 4;
/**
 * Maths items scored before each service run is measured. With the 1,024 used until 2026-12-06, the first of
 * `serve.rss_growth_mb`'s windows fell in the server's warm-up (JIT code, the young generation growing to its size,
 * allocator arenas), so the metric read +4 to +11 MB on runs whose RSS was flat from about 10,000 items on.
 */
const WARM_ITEMS = SMOKE ? 4 * BATCH : 40 * BATCH;

interface Case {
  item: ScoreItem;
  want: ItemResult;
  /** `want` as JSON, made once: the client's check then costs one stringify per result, not two. */
  wantJson: string;
}

interface RunResult {
  seconds: number;
  /** CPU seconds spent while the run lasted, per process role (fault-free runs; a killed worker's share is lost). */
  cpu: Record<string, number>;
  lost: number;
  /** Lost items by reason: an item error code, `wrong` (another result) or `missing`. */
  why: Record<string, number>;
  duplicated: number;
  latencies: number[];
  rss: { done: number; mb: number }[];
  /** Fault-free maths: per turn, the service's items/s over the in-process items/s on the same items (TURNS). */
  turnRatios?: number[];
}

/** Seeded maths items (reasoning text, then a right, wrong or unboxed answer) with their in-process results. */
async function mathCases(n: number): Promise<{ cases: Case[]; perSecond: number }> {
  const rng = new Rng(2026);
  const items: ScoreItem[] = [];
  for (let i = 0; i < n; i++) {
    const a = rng.intBetween(1, 999);
    const b = rng.intBetween(2, 99);
    const gold = rng.random() < 0.5 ? String(a) : `\\frac{${a}}{${b}}`;
    const r = rng.random();
    const answer = r < 0.5 ? gold : r < 0.8 ? String(a + 1) : `${a}/${b}`;
    const steps = Array.from({ length: rng.intBetween(4, 16) }, (_, k) => `Step ${k}: ${a} + ${k} = ${a + k}.`);
    items.push({ reward: "math-answer", completion: `${steps.join(" ")} So $\\boxed{${answer}}$.`, example: { gold } });
  }
  const cases: Case[] = [];
  for (const item of items) {
    const want = await scoreInProcess(item as Extract<ScoreItem, { reward: string }>);
    cases.push({ item, want, wantJson: JSON.stringify(want) });
  }
  // The baseline: the median of IN_PROCESS_PASSES warm passes over the items (the pass above warmed the JIT). A single
  // cold pass, which also wrote each result out as JSON, read anywhere from 27,000 to 41,000 items/s between runs.
  const rates: number[] = [];
  for (let pass = 0; pass < IN_PROCESS_PASSES; pass++) rates.push(n / (await inProcessSeconds(cases)));
  return { cases, perSecond: quantile(rates, 0.5) };
}

/**
 * The rewards the in-process baseline scores with: from dist/ whenever the children run compiled, so both sides of
 * `serve.math_throughput_ratio` run the same compiled checker (under tsx it carries esbuild's `__name` wrappers).
 */
const fromDist = async <T>(path: string): Promise<T> =>
  (await import(pathToFileURL(join(ROOT, "dist", path)).href)) as T;
const { rewards } = COMPILED
  ? await fromDist<typeof RewardsModule>("rewards/index.js")
  : await import("../src/rewards/index.js");
const { toScored } = COMPILED
  ? await fromDist<typeof ServeModule>("serve/index.js")
  : await import("../src/serve/index.js");
const mathSpec = rewards.get("math-answer");
const mathOptions = mathSpec.options.parse({});
/** A maths item scored as bench:rewards scores it: the reward's checker on this thread. */
const scoreInProcess = async (it: Extract<ScoreItem, { reward: string }>) =>
  toScored(await mathSpec.score({ completion: it.completion, gold: it.example.gold }, mathOptions));

/** Seconds one warm in-process pass over `cases` takes. */
async function inProcessSeconds(cases: Case[]): Promise<number> {
  const t0 = performance.now();
  for (const c of cases) await scoreInProcess(c.item as Extract<ScoreItem, { reward: string }>);
  return (performance.now() - t0) / 1000;
}

/**
 * Sandboxed solver items: the gold completion, an empty one and a wrong model, each scored once in process. Each
 * item gets its own trailing line (which sirl ignores), so the worker's memo of identical completions cannot
 * answer it: every item is a sandbox run.
 */
async function solverCases(n: number): Promise<Case[]> {
  const spec = rewards.get("sirl");
  const gold = spec.goldCompletion!(spec.exampleGold, spec.options.parse({}));
  const kinds = [gold, "", gold.replace(/\d/g, "7")];
  const wants = await Promise.all(
    kinds.map(async (c) => toScored(await rewards.score("sirl", { completion: c, gold: spec.exampleGold }))),
  );
  return Array.from({ length: n }, (_, i) => ({
    item: { reward: "sirl", completion: `${kinds[i % 3]!}\n\n(item ${i})`, example: { gold: spec.exampleGold } },
    want: wants[i % 3]!,
    wantJson: JSON.stringify(wants[i % 3]!),
  }));
}

/** A child running an rlvr command; resolves once a stdout line matches `ready`. */
function command(args: string[], ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  // BENCH_SERVE_PROF=DIR writes a V8 CPU profile of every child into DIR (see where the time goes).
  const prof = env.BENCH_SERVE_PROF ? ["--cpu-prof", `--cpu-prof-dir=${resolve(env.BENCH_SERVE_PROF)}`] : [];
  // BENCH_SERVE_NODE_ARGS: extra node/V8 flags for the children (experiments, e.g. heap sizing).
  const nodeArgs = (env.BENCH_SERVE_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const argv = [...prof, ...nodeArgs, ...CHILD_ENTRY, ...args];
  const child = spawn(process.execPath, argv, { stdio: "pipe" });
  let out = "";
  return new Promise((ok, fail) => {
    const onData = (d: Buffer) => {
      out += String(d);
      const m = ready.exec(out);
      if (m) ok({ child, match: m });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (d) => (out += String(d)));
    child.once("exit", (code) => fail(new Error(`rlvr ${args[0]} exited ${code}: ${out.slice(-2000)}`)));
  });
}

function freePort(): Promise<number> {
  return new Promise((ok) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });
}

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn("redis-server", [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
  ]);
  for (let i = 0; i < 100; i++) {
    try {
      await probeRedis(`redis://127.0.0.1:${port}`, 500);
      return child;
    } catch {
      await sleep(50);
    }
  }
  throw new Error("redis-server did not start");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const exited = (c: ChildProcess) =>
  new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once("exit", () => r())));
/** User + system CPU seconds of process `pid` so far (/proc/<pid>/stat fields 14 and 15, in clock ticks of 10 ms). */
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

/**
 * The client's HTTP: node:http over kept-alive connections. The load generator shares the two cores with the service,
 * so it is kept light: with `fetch` the client used 0.018 ms of CPU per maths item, with this 0.013
 * (docs/reward-service.md).
 */
const agent = new Agent({ keepAlive: true, maxSockets: INFLIGHT });
function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  return new Promise((ok, fail) => {
    const req = httpRequest(url, {
      method: "POST",
      agent,
      headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
    });
    req.once("error", fail);
    req.once("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.once("error", fail);
      res.once("end", () => ok({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
    });
    req.end(body);
  });
}

/** Sends `cases` in batches, INFLIGHT requests at a time, checking each result against its in-process one. */
async function drive(
  url: string,
  serverPid: number,
  cases: Case[],
  tag: string,
  at?: { done: number; run: () => Promise<void> },
): Promise<RunResult> {
  const out: RunResult = { seconds: 0, cpu: {}, lost: 0, why: {}, duplicated: 0, latencies: [], rss: [] };
  let next = 0;
  let done = 0;
  const answers: { batch: Case[]; results: ItemResult[]; status: number }[] = [];
  out.rss.push({ done, mb: rssMb(serverPid) });
  const sampler = setInterval(() => out.rss.push({ done, mb: rssMb(serverPid) }), 250);
  const t0 = performance.now();
  const one = async (): Promise<void> => {
    while (next < cases.length) {
      const batch = cases.slice(next, (next += BATCH));
      const started = performance.now();
      let res: { status: number; text: string };
      const body = JSON.stringify({ items: batch.map((c) => c.item) });
      for (;;) {
        res = await postJson(url + "/v1/score", body, { "x-request-id": `${tag}-${next}` });
        if (res.status !== 429) break;
        await sleep(1000);
      }
      const results = res.status === 200 ? (JSON.parse(res.text) as { results: ItemResult[] }).results : [];
      out.latencies.push(performance.now() - started);
      answers.push({ batch, results, status: res.status });
      done += batch.length;
      if (at && done >= at.done) void at.run();
    }
  };
  await Promise.all(Array.from({ length: INFLIGHT }, one));
  out.seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  out.rss.push({ done, mb: rssMb(serverPid) });
  // Checked once the clock has stopped: comparing results is the bench's work, not a trainer's, and on two shared
  // cores it would be charged to the service's throughput.
  for (const { batch, results, status } of answers) {
    out.duplicated += Math.max(0, results.length - batch.length);
    batch.forEach((c, i) => {
      const got = results[i];
      if (JSON.stringify(got) === c.wantJson) return;
      out.lost++;
      const why = got === undefined ? `missing (HTTP ${status})` : "error" in got ? got.error.code : "wrong";
      out.why[why] = (out.why[why] ?? 0) + 1;
    });
  }
  return out;
}

/** The server's heap-budget collections so far (`--heap-budget-mb`), read from its /metrics. */
async function heapCollections(url: string): Promise<{ count: number; seconds: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
  return {
    count: read("rlvr_serve_heap_collections_total"),
    seconds: read("rlvr_serve_heap_collection_seconds_total"),
  };
}

/** Server RSS: mean over the last `window` items minus the mean over the first `window` (samples 250 ms apart). */
function rssGrowth(r: RunResult, total: number, window: number): number {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const first = r.rss.filter((s, i) => s.done <= window || i === 0).map((s) => s.mb);
  const last = r.rss.filter((s, i) => s.done >= total - window || i === r.rss.length - 1).map((s) => s.mb);
  return mean(last) - mean(first);
}

function emit(metric: string, value: number, unit: string): void {
  console.log(JSON.stringify({ bench: "serve", metric, value: Number(value.toPrecision(4)), unit }));
}

/** One service run: Redis, a server, `workers` workers; maths then solver items; optional faults. */
async function serviceRun(workers: number, math: Case[], solver: Case[], faults: boolean) {
  const port = await freePort();
  const redisUrl = `redis://127.0.0.1:${port}`;
  let redis = await startRedis(port);
  const server = await command(
    ["serve-rewards", "--port", "0", "--redis", redisUrl, "--concurrency", "16", "--max-items", "512", ...SERVER_ARGS],
    /listening on (http:\/\/\S+) /,
  );
  const url = server.match[1]!;
  const pool: ChildProcess[] = [];
  const addWorker = async () =>
    pool.push(
      (await command(["reward-worker", "--redis", redisUrl, "--concurrency", "8", ...WORKER_ARGS], /consuming/)).child,
    );
  for (let i = 0; i < workers; i++) await addWorker();
  const rng = new Rng(17);
  let killer: NodeJS.Timeout | null = null;
  let redisRestart: Promise<void> | null = null;
  const restartRedis = () =>
    (redisRestart ??= (async () => {
      redis.kill("SIGKILL");
      await exited(redis);
      redis = await startRedis(port);
    })());
  const tag = `${faults ? "f" : "n"}${workers}`;
  try {
    // Warm-up (not measured): the server and workers load and compile the checkers on their first items, and the
    // server's RSS settles (it climbs by 10-15 MB over its first 10,000 or so items, then stays flat: the soak).
    await drive(url, server.child.pid!, [...math.slice(0, WARM_ITEMS), ...solver.slice(0, 3)], `${tag}-warm`);
    if (faults) {
      killer = setInterval(() => {
        if (pool.length < workers) return; // the last one killed is still being replaced
        pool.splice(rng.int(pool.length), 1)[0]!.kill("SIGKILL");
        void addWorker();
      }, SIZE.killEveryMs);
    }
    // With faults, Redis is killed and restarted (empty) once half the maths items are answered.
    const halfway = faults ? { done: math.length / 2, run: restartRedis } : undefined;
    const roles = (): Record<string, number> => {
      const client = process.cpuUsage();
      return {
        server: cpuSeconds(server.child.pid!),
        workers: pool.reduce((sum, w) => sum + cpuSeconds(w.pid!), 0),
        redis: cpuSeconds(redis.pid!),
        client: (client.user + client.system) / 1e6,
      };
    };
    const heapBefore = await heapCollections(url);
    const m = faults
      ? await drive(url, server.child.pid!, math, `${tag}-m`, halfway)
      : await inTurns(math, async (chunk, turn) => {
          const before = roles();
          const r = await drive(url, server.child.pid!, chunk, `${tag}-m${turn}`);
          const after = roles();
          for (const k of Object.keys(after)) r.cpu[k] = after[k]! - before[k]!;
          return r;
        });
    const heapAfter = await heapCollections(url);
    const heap = { count: heapAfter.count - heapBefore.count, seconds: heapAfter.seconds - heapBefore.seconds };
    await redisRestart;
    const s = await drive(url, server.child.pid!, solver, `${tag}-s`);
    return { math: m, solver: s, heap };
  } finally {
    if (killer) clearInterval(killer);
    // SIGTERM lets a profiled child drain and write its profile; otherwise there is nothing to wait for.
    for (const c of [...pool, server.child]) c.kill(env.BENCH_SERVE_PROF ? "SIGTERM" : "SIGKILL");
    if (env.BENCH_SERVE_PROF) await Promise.all([...pool, server.child].map(exited));
    redis.kill("SIGKILL");
    await Promise.all([...pool, server.child, redis].map(exited));
  }
}

/**
 * The fault-free maths phase in TURNS turns: per turn, an in-process pass over the turn's items (the service idle),
 * then the same items through the service. Returns the turns merged (seconds, CPU, losses and latencies summed; the RSS
 * trace counted over all items) with the per-turn ratios.
 */
async function inTurns(math: Case[], service: (chunk: Case[], turn: number) => Promise<RunResult>): Promise<RunResult> {
  const out: RunResult = {
    seconds: 0,
    cpu: {},
    lost: 0,
    why: {},
    duplicated: 0,
    latencies: [],
    rss: [],
    turnRatios: [],
  };
  const size = Math.ceil(math.length / TURNS);
  for (let turn = 0, at = 0; at < math.length; turn++, at += size) {
    const chunk = math.slice(at, at + size);
    const local = await inProcessSeconds(chunk);
    const r = await service(chunk, turn);
    out.turnRatios!.push(local / r.seconds);
    out.seconds += r.seconds;
    for (const [k, v] of Object.entries(r.cpu)) out.cpu[k] = (out.cpu[k] ?? 0) + v;
    out.lost += r.lost;
    for (const [k, v] of Object.entries(r.why)) out.why[k] = (out.why[k] ?? 0) + v;
    out.duplicated += r.duplicated;
    out.latencies.push(...r.latencies);
    out.rss.push(...r.rss.map((x) => ({ done: at + x.done, mb: x.mb })));
  }
  return out;
}

async function bench(): Promise<void> {
  try {
    await new Promise<void>((ok, fail) =>
      spawn("redis-server", ["--version"])
        .once("exit", (c) => (c === 0 ? ok() : fail()))
        .once("error", fail),
    );
  } catch {
    console.error("bench:serve needs redis-server on PATH (apt-get install redis-server)");
    process.exit(1);
  }
  const { cases: math, perSecond: inProcess } = await mathCases(SIZE.math);
  const solver = await solverCases(SIZE.solver);
  emit("serve.in_process_math_items_per_s", inProcess, "items/s (this thread, rewards.score)");
  let best = { workers: 0, ratio: 0 };
  const report = (
    prefix: string,
    r: { math: RunResult; solver: RunResult; heap: { count: number; seconds: number } },
    workers: number,
  ) => {
    const rate = SIZE.math / r.math.seconds;
    emit(`${prefix}.w${workers}.math_items_per_s`, rate, "items/s");
    // The server's heap budget over the maths items: how many full collections, and their time per item.
    emit(`${prefix}.w${workers}.heap_collections`, r.heap.count, "full collections (heap budget), maths items");
    emit(`${prefix}.w${workers}.heap_gc_ms_per_item`, (r.heap.seconds * 1000) / SIZE.math, "ms per maths item");
    const turns = r.math.turnRatios;
    if (turns) {
      const ratio = quantile(turns, 0.5);
      if (ratio > best.ratio) best = { workers, ratio };
      emit(`${prefix}.w${workers}.math_throughput_ratio`, ratio, "service / in process, median of the turns");
      console.log(
        `  ${workers} worker(s): ${rate.toFixed(0)} maths items/s; service / in process per turn ` +
          `${turns.map((x) => x.toFixed(2)).join(", ")} (median ${ratio.toFixed(2)}); against the baseline ` +
          `measured before the runs ${(rate / inProcess).toFixed(2)}`,
      );
    }
    emit(`${prefix}.w${workers}.p50_ms`, quantile(r.math.latencies, 0.5), `ms per ${BATCH}-item request`);
    emit(`${prefix}.w${workers}.p99_ms`, quantile(r.math.latencies, 0.99), `ms per ${BATCH}-item request`);
    if (SIZE.solver > 0) {
      // BENCH_SERVE_SOLVER=0 (maths only, for experiments) leaves these out.
      emit(`${prefix}.w${workers}.solver_items_per_s`, SIZE.solver / r.solver.seconds, "items/s");
      emit(`${prefix}.w${workers}.solver_p99_ms`, quantile(r.solver.latencies, 0.99), `ms per ${BATCH}-item request`);
    }
    // Where the CPU goes: seconds per 1,000 maths items for each process role (load-independent, unlike items/s).
    for (const [role, sec] of Object.entries(r.math.cpu))
      emit(`${prefix}.w${workers}.cpu_ms_per_item.${role}`, (sec * 1000) / SIZE.math, "CPU ms per maths item");
    if (r.math.lost + r.solver.lost > 0)
      console.error(
        `  ${prefix} with ${workers} workers lost: maths ${JSON.stringify(r.math.why)}, solver ${JSON.stringify(r.solver.why)}`,
      );
  };
  let lost = 0;
  let duplicated = 0;
  let p99 = 0;
  let growth = 0;
  for (const w of SIZE.workers) {
    const r = await serviceRun(w, math, solver, false);
    report("serve", r, w);
    if (env.BENCH_SERVE_RSS_TRACE === "1") {
      const step = Math.max(1, Math.floor(r.math.rss.length / 20));
      const trace = r.math.rss.filter((_, i) => i % step === 0).map((s) => `${s.done}:${s.mb.toFixed(0)}`);
      console.log(`  server RSS (items:MB) with ${w} workers: ${trace.join(" ")}`);
    }
    lost += r.math.lost + r.solver.lost;
    duplicated += r.math.duplicated + r.solver.duplicated;
    p99 = Math.max(p99, quantile(r.math.latencies, 0.99));
    growth = Math.max(growth, rssGrowth(r.math, SIZE.math, SIZE.window));
  }
  emit("serve.lost", lost, "items");
  emit("serve.duplicated", duplicated, "results");
  emit(
    "serve.math_throughput_ratio",
    best.ratio,
    `service / in process, median over ${TURNS} turns, best worker count (${best.workers})`,
  );
  emit("serve.p99_ms", p99, `ms per ${BATCH}-item request (worst worker count)`);
  emit("serve.rss_growth_mb", growth, `MB, last ${SIZE.window} items minus first (worst worker count)`);
  if (SIZE.soak > 0) await soakRun(math, solver);
  if (!FAULTS) process.exit(0);
  const f = await serviceRun(2, math, solver, true);
  report("serve.faults", f, 2);
  emit("serve.faults.lost", f.math.lost + f.solver.lost, "items");
  emit("serve.faults.duplicated", f.math.duplicated + f.solver.duplicated, "results");
  emit("serve.faults.math_throughput_ratio", SIZE.math / f.math.seconds / inProcess, "service / in process");
  emit("serve.faults.p99_ms", quantile(f.math.latencies, 0.99), `ms per ${BATCH}-item request`);
  emit("serve.faults.rss_growth_mb", rssGrowth(f.math, SIZE.math, SIZE.window), "MB");
  process.exit(0);
}

/** Soak: the maths items again and again (new request ids each pass) through 2 workers, watching the RSS floor. */
async function soakRun(math: Case[], solver: Case[]): Promise<void> {
  const passes = Math.max(1, Math.round(SIZE.soak / SIZE.math));
  const soakCases = Array.from({ length: passes }, () => math).flat();
  const soak = await serviceRun(2, soakCases, solver.slice(0, 3), false);
  const floors = rssFloors(soak.math.rss, soakCases.length);
  const step = Math.max(1, Math.floor(soak.math.rss.length / 24));
  const trace = soak.math.rss.filter((_, i) => i % step === 0).map((x) => `${x.done}:${x.mb.toFixed(0)}`);
  console.log(`  soak: server RSS (items:MB) over ${soakCases.length} items: ${trace.join(" ")}`);
  console.log(`  soak: RSS floor per quarter (MB): ${floors.map((f) => f.toFixed(1)).join(", ")}`);
  emit("serve.soak.items", soakCases.length, "maths items through 2 workers");
  emit("serve.soak.lost", soak.math.lost + soak.math.duplicated, "items lost or duplicated");
  emit("serve.soak.rss_floor_growth_mb", floors[3]! - floors[1]!, "MB, RSS floor of the last quarter minus the second");
}

if (process.argv[2] === "--as-cli") {
  await main([process.argv[0]!, "rlvr", ...process.argv.slice(3)]); // a child: run the rlvr command given
} else {
  await bench();
}
