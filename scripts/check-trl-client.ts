/**
 * `npm run check:trl-client`: proof that the Python client works inside a real trainer (issue 17, "Clients for the
 * trainers people use"). It starts `rlvr serve-rewards` on a free loopback port with a token, runs a short real TRL
 * `GRPOTrainer` (scripts/check-trl-client.py: the tiny Llama fixture on CPU, no downloads) whose `reward_funcs` are
 * three `rlvr_client.TrlReward`s (`math-answer`, the `addition` task's weighted terms, and `cosine-length`, whose
 * value varies with each completion's length), and reads back every (completion, reward) TRL put into its reward
 * tensor. It then scores the same completions in process (`rewards.score`, `task.score`) and checks that each of
 * TRL's values equals rlvr's, rounded to float32 (TRL's tensor), with None ↔ NaN for the unscorable row the dataset
 * carries on purpose (an empty gold). It also checks TRL's logged `rewards/<name>/mean` against the mean of rlvr's
 * scores. Prints PASS or FAIL; exits 1 on any mismatch, 0 with a SKIP line when the Python environment with TRL is
 * absent (`.venv/bin/python`, or BENCH_TRL_PYTHON, as `bench:trl`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { FIXTURE, haveTrl, PY, ROOT, TSX } from "../bench/trl-shared.js";
import { rewards } from "../src/rewards/index.js";
import { getTask } from "../src/tasks/index.js";

/** The reward functions TRL gets, by the names it logs them under; `gold` says how the answer column is sent. */
const FUNCS = [
  { name: "rlvr/math-answer", reward: "math-answer", options: { region: "all" }, gold: "answer" },
  { name: "rlvr/task:addition", task: "addition", options: { minDigits: 1, maxDigits: 2 }, gold: "answer-object" },
  { name: "rlvr/cosine-length", reward: "cosine-length", options: { unit: "chars", maxLen: 48 }, gold: "answer" },
] as const;
type Func = (typeof FUNCS)[number];
const RUN = { G: 4, prompts_per_step: 4, steps: 3, max_new_tokens: 16, seed: 0, batch_size: 8 };

interface Row {
  prompt: string;
  completion: string;
  rewards: Record<string, number | null>;
}

async function main(): Promise<void> {
  if (!haveTrl()) {
    console.log(
      `check:trl-client: SKIP: no Python with trl, torch and transformers at ${PY} (create .venv, or set BENCH_TRL_PYTHON)`,
    );
    return;
  }
  const task = getTask("addition", FUNCS[1].options);
  const examples = task
    .generate("train", 7, 0)
    .map((e) => ({ prompt: e.prompt, answer: (e.gold as { answer: string }).answer }));
  examples.push({ prompt: "0+0=", answer: "" }); // a broken row: the gold cannot be parsed, every reward is None
  const byPrompt = new Map(examples.map((e) => [e.prompt, e]));
  const token = randomBytes(16).toString("hex");
  const dir = mkdtempSync(join(tmpdir(), "rlvr-check-trl-"));
  const server = await startService(token);
  let out: string;
  try {
    const settings = {
      ...RUN,
      url: server.url,
      token,
      model_dir: FIXTURE,
      out_dir: join(dir, "out"),
      examples,
      rewards: FUNCS,
    };
    writeFileSync(join(dir, "settings.json"), JSON.stringify(settings));
    console.log(`check:trl-client: ${server.banner}`);
    out = await runPython(join(ROOT, "scripts", "check-trl-client.py"), join(dir, "settings.json"));
  } finally {
    server.child.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
  const lines = out.split("\n").flatMap((l) => {
    try {
      return l.startsWith("{") ? [JSON.parse(l) as Record<string, unknown>] : []; // TRL prints Python dicts too
    } catch {
      return [];
    }
  });
  const steps = lines.filter((l) => "rows" in l) as { step: number; rows: Row[] }[];
  const logged = lines.filter((l) => "logged" in l) as { step: number; logged: Record<string, number | null> }[];
  const done = lines.find((l) => "done" in l) as { seconds: number; requests: number; retried: number } | undefined;

  const failures: string[] = [];
  const stats = new Map<string, { n: number; nulls: number; values: Set<number> }>(
    FUNCS.map((f) => [f.name, { n: 0, nulls: 0, values: new Set() }]),
  );
  for (const { step, rows } of steps) {
    const sums = new Map<string, { sum: number; n: number }>();
    for (const row of rows) {
      const ex = byPrompt.get(row.prompt);
      if (!ex) {
        failures.push(`step ${step}: TRL logged a prompt not in the dataset: ${JSON.stringify(row.prompt)}`);
        continue;
      }
      for (const f of FUNCS) {
        const want = await scoreInProcess(f, ex.prompt, ex.answer, row.completion);
        const got = row.rewards[f.name];
        const s = stats.get(f.name)!;
        s.n++;
        if (want === null) s.nulls++;
        else s.values.add(want);
        const equal = want === null ? got === null : got === Math.fround(want);
        if (!equal)
          failures.push(`step ${step} ${f.name}: TRL ${got}, rlvr ${want} for ${JSON.stringify(row.completion)}`);
        if (want !== null) {
          const m = sums.get(f.name) ?? { sum: 0, n: 0 };
          sums.set(f.name, { sum: m.sum + Math.fround(want), n: m.n + 1 });
        }
      }
    }
    const log = logged.find((l) => l.step === step)?.logged;
    for (const f of FUNCS) {
      const m = sums.get(f.name);
      const mean = log?.[`rewards/${f.name}/mean`];
      if (!m || mean === undefined || mean === null || Math.abs(mean - m.sum / m.n) > 1e-5) {
        failures.push(`step ${step} ${f.name}: TRL logged mean ${mean}, rlvr's mean ${m ? m.sum / m.n : "none"}`);
      }
    }
  }
  const expectedRows = RUN.steps * RUN.G * RUN.prompts_per_step;
  const total = steps.reduce((a, s) => a + s.rows.length, 0);
  if (steps.length !== RUN.steps || total !== expectedRows)
    failures.push(`TRL logged ${total} rows in ${steps.length} steps, expected ${expectedRows} in ${RUN.steps}`);

  for (const [name, s] of stats) {
    console.log(
      `  ${name.padEnd(20)} ${s.n} completions, ${s.values.size} distinct values, ${s.nulls} None (NaN in TRL)`,
    );
  }
  if (done)
    console.log(
      `  TRL trained ${RUN.steps} steps in ${done.seconds.toFixed(1)} s; the client sent ${done.requests} requests (${done.retried} retried)`,
    );
  if (failures.length) {
    console.log(`FAIL: ${failures.length} mismatches between TRL's rewards and rlvr's in-process scores`);
    for (const f of failures.slice(0, 20)) console.log(`  ${f}`);
    process.exitCode = 1;
    return;
  }
  console.log(
    `PASS: all ${total * FUNCS.length} (completion, reward) pairs TRL computed through the service equal rlvr's in-process scores (float32), and TRL's logged means match`,
  );
}

/** rlvr's own score for the completion, as the service would compute it for the client's item (null: unscorable). */
async function scoreInProcess(f: Func, prompt: string, answer: string, completion: string): Promise<number | null> {
  const r =
    "reward" in f
      ? await rewards.score(f.reward, { completion, gold: answer, prompt }, f.options)
      : await getTask(f.task, f.options).score(
          { id: "check", prompt, gold: { answer }, goldCompletion: "" },
          completion,
        );
  return typeof r.score === "number" && Number.isFinite(r.score) ? r.score : null;
}

/** Starts `rlvr serve-rewards --port 0` (the CLI from source, through tsx) and waits for its listening line. */
function startService(token: string): Promise<{ child: ChildProcess; url: string; banner: string }> {
  const cli = pathToFileURL(join(ROOT, "src", "cli", "index.ts")).href;
  const entry = `import(${JSON.stringify(cli)}).then((m) => m.main(["node", "rlvr", ...process.argv.slice(1)]));`;
  const child = spawn(TSX, ["-e", entry, "serve-rewards", "--port", "0", "--host", "127.0.0.1"], {
    env: { ...process.env, RLVR_REWARD_TOKEN: token },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => fail(new Error(`rlvr serve-rewards did not start within 60 s:\n${seen}`)), 60_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill("SIGTERM");
      reject(err);
    };
    const onData = (b: Buffer) => {
      seen += b.toString();
      const m = /rlvr reward service listening on (http:\/\/\S+) .*/.exec(seen);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, banner: m[0] });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("exit", (code) => fail(new Error(`rlvr serve-rewards exited with ${code}:\n${seen}`)));
  });
}

/** Runs the TRL script; resolves with its stdout, rejects with its stderr's tail. */
function runPython(script: string, settings: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(PY, [script, settings], {
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (err = (err + b.toString()).slice(-8000)));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${script} exited with ${code}:\n${err.slice(-4000)}`)),
    );
  });
}

main().catch((err: unknown) => {
  console.log(`FAIL: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
