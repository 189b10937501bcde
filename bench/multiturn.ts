/**
 * Multi-turn generation overhead (issue 12): tokens per second of the episode loop with tool turns against single
 * turn, on the same model, batch and total completion length. Multi-turn rows alternate `turn` sampled tokens and
 * `turn` inserted tool tokens (a tool that always answers), so half the completion is inserted; single-turn rows
 * sample the whole length. Both count every completion token (sampled or inserted: each costs one slot of the KV
 * cache) per second of CPU time (load-proof; wall time is printed too). Target: ratio >= 0.7.
 * Prints JSON lines {"bench","metric","value","unit"}: rollout.multiturn_tokens_per_s_ratio and both rates.
 * Run: npm run bench:multiturn   (BENCH_MULTITURN_SMOKE=1: micro model, 2 rows, 40 tokens, one repeat)
 * Env: BENCH_MULTITURN_MODEL (tiny-char), _ROWS (16), _TOKENS (208), _TURN (16), _REPEATS (3).
 */
import { Rng } from "../src/util/index.js";
import { createModel } from "../src/models/registry.js";
import { CharTokenizer, type Tokenizer } from "../src/models/tokenizer.js";
import { runEpisodes } from "../src/rollout/episode.js";
import type { Environment } from "../src/envs/types.js";

const SMOKE = process.env.BENCH_MULTITURN_SMOKE === "1";
const num = (name: string, dflt: number, smoke: number): number =>
  SMOKE ? smoke : Number(process.env[`BENCH_MULTITURN_${name}`] ?? dflt);
const MODEL = SMOKE ? "micro-char" : (process.env.BENCH_MULTITURN_MODEL ?? "tiny-char");
const ROWS = num("ROWS", 16, 2);
const TOKENS = num("TOKENS", 208, 40); // (2k + 1)·TURN: the last model turn ends exactly at the budget
const TURN = num("TURN", 16, 8);
const REPEATS = num("REPEATS", 3, 1);

/**
 * The char tokenizer with eos switched off for the timed runs: a row then never ends early (a random model draws
 * eos now and then), so both arms decode exactly TOKENS completion tokens per row, the same total length. (With eos
 * on, single-turn rows ended after about a quarter of the budget while the multi-turn ones ran on, which made
 * multi-turn look 3× faster per token than single-turn.)
 */
const base = new CharTokenizer();
const tok: Tokenizer = {
  vocabSize: base.vocabSize,
  padId: base.padId,
  bosId: base.bosId,
  eosId: -1,
  encode: (t) => base.encode(t),
  decode: (ids) => base.decode(ids),
  toJSON: () => base.toJSON(),
};
const model = createModel(MODEL, new Rng(0)).model.eval();
const prompts = Array.from({ length: ROWS }, (_, b) => tok.encode(`Q${b}: does kato treat vemin?\n`));

/** A tool that answers every turn with TURN characters, never ending the episode: only budgets end it. */
const tool: Environment = {
  name: "bench-tool",
  stop: [],
  budgets: { maxTurns: 1_000, maxTokensPerTurn: TURN },
  timeoutMs: 10_000,
  onError: "reply",
  errorReward: 0,
  loopReward: 0,
  start: () => ({ step: (_t, info) => ({ kind: "observation", text: `<r${info.turn}>`.padEnd(TURN, ".") }) }),
};

/** One timed batch: completion tokens and the CPU and wall seconds it took. */
async function timed(
  env: Environment | null,
  seed: number,
): Promise<{ tokens: number; sampled: number; cpu: number; wall: number }> {
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  const out = await runEpisodes(
    model,
    tok,
    prompts,
    env,
    prompts.map(() => env?.start({} as never) ?? null),
    { maxNewTokens: TOKENS, temperature: 1, rng: new Rng(seed) },
  );
  const c = process.cpuUsage(c0);
  return {
    tokens: out.reduce((s, r) => s + r.completionIds.length, 0),
    sampled: out.reduce((s, r) => s + r.lossMask.reduce((a, m) => a + m, 0), 0),
    cpu: (c.user + c.system) / 1e6,
    wall: (performance.now() - w0) / 1000,
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

await timed(null, 99); // warm-up (JIT, kernels), both arms
await timed(tool, 99);
const single: number[] = [];
const multi: number[] = [];
const singleWall: number[] = [];
const multiWall: number[] = [];
const multiSampled: number[] = [];
let lengths = "";
for (let r = 0; r < REPEATS; r++) {
  // Interleaved so that background load hits both arms alike.
  const s = await timed(null, r);
  const m = await timed(tool, r);
  single.push(s.tokens / s.cpu);
  multi.push(m.tokens / m.cpu);
  singleWall.push(s.tokens / s.wall);
  multiWall.push(m.tokens / m.wall);
  multiSampled.push(m.sampled / m.cpu);
  if (s.tokens !== m.tokens)
    throw new Error(`the arms decoded ${s.tokens} and ${m.tokens} tokens: not the same length`);
  lengths = `single ${s.tokens}, multi ${m.tokens} (${m.sampled} sampled)`;
}
const ratio = median(multi) / median(single);
const line = (metric: string, value: number, unit: string) =>
  console.log(JSON.stringify({ bench: "multiturn", metric, value: Math.round(value * 1000) / 1000, unit }));
line("rollout.multiturn_tokens_per_s_ratio", ratio, "multi-turn / single-turn completion tokens per CPU second");
line("rollout.singleturn_tokens_per_s", median(single), "completion tokens per CPU second");
line("rollout.multiturn_tokens_per_s", median(multi), "completion tokens (sampled + inserted) per CPU second");
line("rollout.multiturn_sampled_tokens_per_s", median(multiSampled), "sampled tokens only, per CPU second");
line("rollout.multiturn_wall_ratio", median(multiWall) / median(singleWall), "same ratio on wall time");
console.log(
  `bench:multiturn model=${MODEL} rows=${ROWS} tokens=${TOKENS} turn=${TURN} repeats=${REPEATS}${SMOKE ? " (smoke)" : ""}: ` +
    `multi-turn ${median(multi).toFixed(0)} vs single-turn ${median(single).toFixed(0)} tokens/CPU-s, ratio ${ratio.toFixed(2)} ` +
    `(target >= 0.7: ${ratio >= 0.7 ? "met" : "MISSED"}); last batch completion tokens: ${lengths}`,
);
