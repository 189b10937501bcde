/**
 * SFT learns: a built-in synthetic task (multi-digit addition, "12+345=" → "357") trains a 1-3M-parameter model
 * from scratch to >= 95% exact match on held-out examples. Prints the loss curve and the held-out exact match as
 * JSON lines ({"bench","metric","value","unit"}) plus readable lines, and the wall time.
 *
 * Data are generated here: operands of 1..maxDigits digits (each digit count equally likely, so short sums are not
 * drowned out), train and held-out sets disjoint by prompt. Evaluation is greedy decoding with the KV-cache
 * sampler, stopping at eos; a completion is correct when its text equals the expected answer exactly.
 *
 * Format, following Lee et al., "Teaching Arithmetic to Small Transformers" (2023), section 4 (reversed output) and appendix B
 * (zero padding): operands are zero-padded to a fixed width and the sum is written least-significant digit first,
 * also zero-padded: "012+345=" → "7530". Every example then has the same layout, and each output digit depends
 * only on two operand digits at fixed offsets and the carry from the digit just written. `--format plain` writes
 * the sum most-significant digit first; `--no-padded` drops the padding ("12+345=" → "753"). The default model is
 * the GPT-2-shaped `tiny-char-gpt` (1.29M parameters): with the fixed layout its learned absolute positions find
 * the operand digits quickly, while the Llama-shaped `tiny-char` (RoPE) sat on a plateau for 1000+ steps (measured
 * numbers for every variant are in docs/models.md).
 *
 * Usage: npm run bench:sft [-- --steps 4000 --batch 64 --lr 3e-3 --model tiny-char-gpt --digits 3 --format reversed]
 */
import { parseArgs } from "node:util";
import { backend } from "../src/engine/index.js";
import { createModel } from "../src/models/registry.js";
import type { Tokenizer } from "../src/models/tokenizer.js";
import type { Transformer } from "../src/models/transformer.js";
import { sample } from "../src/sampling/sample.js";
import { trainSft, type SftExample } from "../src/trainer/sft.js";
import { Rng } from "../src/util/index.js";

const { values: args } = parseArgs({
  options: {
    steps: { type: "string", default: "4000" },
    format: { type: "string", default: "reversed" },
    "no-padded": { type: "boolean", default: false },
    batch: { type: "string", default: "64" },
    lr: { type: "string", default: "3e-3" },
    model: { type: "string", default: "tiny-char-gpt" },
    digits: { type: "string", default: "3" },
    seed: { type: "string", default: "0" },
    "eval-every": { type: "string", default: "250" },
    "eval-size": { type: "string", default: "500" },
    target: { type: "string", default: "0.98" },
  },
});
const steps = Number(args.steps),
  batchSize = Number(args.batch),
  lr = Number(args.lr);
const maxDigits = Number(args.digits),
  evalEvery = Number(args["eval-every"]),
  evalSize = Number(args["eval-size"]);
const target = Number(args.target);
const reversed = args.format === "reversed";
const padded = !args["no-padded"];
if (args.format !== "reversed" && args.format !== "plain")
  throw new Error(`--format must be "reversed" or "plain", got "${args.format}"`);
const BENCH = "sft-learn";

function emit(metric: string, value: number, unit: string, extra: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ bench: BENCH, metric, value: Number(value.toPrecision(5)), unit, ...extra }));
}

/** Zero-pads an operand to maxDigits digits. */
function pad(n: number): string {
  return String(n).padStart(maxDigits, "0");
}

/** A random n-digit number (no leading zero unless n = 1). */
function withDigits(rng: Rng, n: number): number {
  return n === 1 ? rng.int(10) : 10 ** (n - 1) + rng.int(9 * 10 ** (n - 1));
}

/** `count` distinct addition examples not in `exclude`. */
function makeExamples(rng: Rng, count: number, exclude: Set<string>): SftExample[] {
  const out: SftExample[] = [];
  while (out.length < count) {
    const a = withDigits(rng, rng.intBetween(1, maxDigits)),
      b = withDigits(rng, rng.intBetween(1, maxDigits));
    const prompt = padded ? `${pad(a)}+${pad(b)}=` : `${a}+${b}=`;
    if (exclude.has(prompt)) continue;
    exclude.add(prompt);
    let sum = String(a + b);
    if (padded) sum = sum.padStart(maxDigits + 1, "0");
    out.push({ prompt, completion: reversed ? [...sum].reverse().join("") : sum });
  }
  return out;
}

/** Greedy exact match on `examples`. */
function exactMatch(model: Transformer, tok: Tokenizer, examples: readonly SftExample[]): number {
  model.eval();
  let correct = 0;
  for (let i = 0; i < examples.length; i += 100) {
    const chunk = examples.slice(i, i + 100);
    const prompts = chunk.map((e) => [...(tok.bosId !== null ? [tok.bosId] : []), ...tok.encode(e.prompt)]);
    const out = sample(model, tok, prompts, { maxNewTokens: maxDigits + 2, temperature: 0, rng: new Rng(0) });
    out.forEach((s, j) => {
      if (s.text === chunk[j]!.completion) correct++;
    });
  }
  model.train();
  return correct / examples.length;
}

function main(): void {
  const rng = new Rng(Number(args.seed));
  const seen = new Set<string>();
  const space = 10 ** (2 * maxDigits); // distinct prompts (pairs of operands with 1..maxDigits digits)
  const heldOut = makeExamples(rng.split("test"), evalSize, seen);
  const finalTest = makeExamples(rng.split("final"), Math.min(2000, Math.floor(space / 10)), seen);
  // at most half of what is left, so rejection sampling of unseen prompts stays fast
  const train = makeExamples(
    rng.split("train"),
    Math.min(100_000, steps * batchSize, Math.floor((space - seen.size) / 2)),
    seen,
  );
  const { model, tokenizer } = createModel(args.model!, rng.split("init"));
  const params = model.numParameters();
  console.log(
    `# sft-learn: ${args.model} (${(params / 1e6).toFixed(2)}M params, ${model.config.arch}), backend ${backend().name}, ` +
      `${maxDigits}-digit addition (${args.format}${padded ? ", zero-padded" : ""}), ${train.length} train / ${heldOut.length} held-out, ${steps} steps x ${batchSize}, lr ${lr}`,
  );
  emit("model.params", params, "count");

  const t0 = performance.now();
  let evalSeconds = 0;
  let smooth = NaN;
  let lastAcc = 0;
  let stoppedAt = steps;
  let positions = 0;
  try {
    trainSft(model, tokenizer, train, {
      steps,
      batchSize,
      lr,
      rng: rng.split("order"),
      onStep: (m) => {
        positions += m.positions;
        smooth = Number.isNaN(smooth) ? m.loss : 0.95 * smooth + 0.05 * m.loss;
        if (m.step % 50 === 0)
          emit("train.loss", smooth, "nats", {
            step: m.step,
            lr: Number(m.lr.toPrecision(3)),
            s: Math.round((performance.now() - t0) / 1000),
          });
        if (m.step % evalEvery === 0 || m.step === steps) {
          const e0 = performance.now();
          lastAcc = exactMatch(model, tokenizer, heldOut);
          evalSeconds += (performance.now() - e0) / 1000;
          const wall = (performance.now() - t0) / 1000;
          emit("heldout.exact_match", lastAcc, "fraction", { step: m.step });
          console.log(
            `step ${m.step}: loss ${smooth.toFixed(4)}, held-out exact match ${(100 * lastAcc).toFixed(1)}%, ${wall.toFixed(0)} s`,
          );
          if (lastAcc >= target) {
            stoppedAt = m.step;
            throw new EarlyStop();
          }
        }
      },
    });
  } catch (err) {
    if (!(err instanceof EarlyStop)) throw err;
  }
  const wall = (performance.now() - t0) / 1000;
  const final = exactMatch(model, tokenizer, finalTest);
  emit("final.exact_match", final, "fraction", { step: stoppedAt, examples: finalTest.length });
  emit("wall_s", wall, "s", { trainSeconds: Number((wall - evalSeconds).toFixed(1)) });
  emit("train.tokens_per_s", positions / (wall - evalSeconds), "tokens/s");
  console.log(
    `sft-learn: ${(100 * final).toFixed(1)}% exact match on ${finalTest.length} unseen sums after ${stoppedAt} steps ` +
      `in ${wall.toFixed(0)} s (${evalSeconds.toFixed(0)} s of it evaluating) — target >= 95%: ${final >= 0.95 ? "PASS" : "FAIL"}`,
  );
}

/** Thrown from the step hook to end training once the held-out target is met. */
class EarlyStop extends Error {}

main();
