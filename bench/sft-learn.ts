/**
 * SFT learns: a built-in synthetic task (multi-digit addition, "12+345=" → "357") trains a 1-3M-parameter model
 * from scratch to >= 95% exact match on held-out examples. Prints the loss curve and the held-out exact match as
 * JSON lines ({"bench","metric","value","unit"}) plus readable lines, and the wall time.
 *
 * Data are generated here: operands of 1..maxDigits digits (each digit count equally likely, so short sums are not
 * drowned out), train and held-out sets disjoint by prompt. Evaluation is greedy decoding with the KV-cache
 * sampler, stopping at eos; a completion is correct when its text equals the sum exactly.
 *
 * Usage: npm run bench:sft [-- --steps 3000 --batch 64 --lr 3e-3 --model tiny-char --digits 3 --seed 0]
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
    steps: { type: "string", default: "3000" },
    batch: { type: "string", default: "64" },
    lr: { type: "string", default: "3e-3" },
    model: { type: "string", default: "tiny-char" },
    digits: { type: "string", default: "3" },
    seed: { type: "string", default: "0" },
    "eval-every": { type: "string", default: "250" },
    "eval-size": { type: "string", default: "500" },
    target: { type: "string", default: "0.98" },
  },
});
const steps = Number(args.steps), batchSize = Number(args.batch), lr = Number(args.lr);
const maxDigits = Number(args.digits), evalEvery = Number(args["eval-every"]), evalSize = Number(args["eval-size"]);
const target = Number(args.target);
const BENCH = "sft-learn";

function emit(metric: string, value: number, unit: string, extra: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ bench: BENCH, metric, value: Number(value.toPrecision(5)), unit, ...extra }));
}

/** A random n-digit number (no leading zero unless n = 1). */
function withDigits(rng: Rng, n: number): number {
  return n === 1 ? rng.int(10) : 10 ** (n - 1) + rng.int(9 * 10 ** (n - 1));
}

/** `count` distinct addition examples not in `exclude`. */
function makeExamples(rng: Rng, count: number, exclude: Set<string>): SftExample[] {
  const out: SftExample[] = [];
  while (out.length < count) {
    const a = withDigits(rng, rng.intBetween(1, maxDigits)), b = withDigits(rng, rng.intBetween(1, maxDigits));
    const prompt = `${a}+${b}=`;
    if (exclude.has(prompt)) continue;
    exclude.add(prompt);
    out.push({ prompt, completion: String(a + b) });
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
    out.forEach((s, j) => { if (s.text === chunk[j]!.completion) correct++; });
  }
  model.train();
  return correct / examples.length;
}

function main(): void {
  const rng = new Rng(Number(args.seed));
  const seen = new Set<string>();
  const heldOut = makeExamples(rng.split("test"), evalSize, seen);
  const finalTest = makeExamples(rng.split("final"), 2000, seen);
  const train = makeExamples(rng.split("train"), Math.min(100_000, steps * batchSize), seen);
  const { model, tokenizer } = createModel(args.model!, rng.split("init"));
  const params = model.numParameters();
  console.log(`# sft-learn: ${args.model} (${(params / 1e6).toFixed(2)}M params, ${model.config.arch}), backend ${backend().name}, ` +
    `${maxDigits}-digit addition, ${train.length} train / ${heldOut.length} held-out, ${steps} steps x ${batchSize}, lr ${lr}`);
  emit("model.params", params, "count");

  const t0 = performance.now();
  let evalSeconds = 0;
  let smooth = NaN;
  let lastAcc = 0;
  let stoppedAt = steps;
  let positions = 0;
  try {
    trainSft(model, tokenizer, train, {
      steps, batchSize, lr, rng: rng.split("order"),
      onStep: (m) => {
        positions += m.positions;
        smooth = Number.isNaN(smooth) ? m.loss : 0.95 * smooth + 0.05 * m.loss;
        if (m.step % 50 === 0) emit("train.loss", smooth, "nats", { step: m.step, lr: Number(m.lr.toPrecision(3)), s: Math.round((performance.now() - t0) / 1000) });
        if (m.step % evalEvery === 0 || m.step === steps) {
          const e0 = performance.now();
          lastAcc = exactMatch(model, tokenizer, heldOut);
          evalSeconds += (performance.now() - e0) / 1000;
          const wall = (performance.now() - t0) / 1000;
          emit("heldout.exact_match", lastAcc, "fraction", { step: m.step });
          console.log(`step ${m.step}: loss ${smooth.toFixed(4)}, held-out exact match ${(100 * lastAcc).toFixed(1)}%, ${wall.toFixed(0)} s`);
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
  console.log(`sft-learn: ${(100 * final).toFixed(1)}% exact match on ${finalTest.length} unseen sums after ${stoppedAt} steps ` +
    `in ${wall.toFixed(0)} s (${evalSeconds.toFixed(0)} s of it evaluating) — target >= 95%: ${final >= 0.95 ? "PASS" : "FAIL"}`);
}

/** Thrown from the step hook to end training once the held-out target is met. */
class EarlyStop extends Error {}

main();
