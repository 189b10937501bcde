/**
 * Sampling from a masked-diffusion LM by iterative unmasking (LLaDA, arXiv 2502.09992 §2.4 and app. B.3; its
 * `generate.py`). The answer region starts as `genLength` mask tokens after the prompt. It is decoded in
 * `genLength / blockLength` blocks from left to right (semi-autoregressive; one block = pure diffusion), each block in
 * `steps / blocks` steps. At every step one forward pass over the whole sequence proposes a token for every masked
 * position (sampled from softmax(logits / T), or the argmax at T = 0), and the block's n_s most confident proposals
 * are kept; the rest stay masked. n_s spreads the block's masks evenly over its steps, the first
 * (masks mod steps) steps taking one more, as LLaDA's `get_num_transfer_tokens`. Remasking `lowConfidence` ranks by
 * the model's probability of the proposal (softmax(logits), untempered, as LLaDA); `random` ranks at random.
 *
 * Departures from LLaDA: the mask token is never proposed (its logit is excluded), so a finished answer holds no [M];
 * sampling uses the run's seeded Rng (same seed, same answers) instead of Gumbel noise in float64, which draws from
 * the same distribution. Prompts of different lengths are left-padded with a key mask (LLaDA assumes equal lengths).
 * The completion is the generated tokens up to and including the first eos (finish "stop"), or all of them
 * (finish "length"); `generated` keeps every position, which the d1 estimator re-masks in full, and `unmaskedAt`
 * records the step at which each position was unmasked, which the trajectory estimator replays
 * (src/algorithms/masked-estimator.ts).
 */
import { noGrad, tidy } from "../engine/index.js";
import type { DiffusionLM } from "../models/diffusion-lm.js";
import type { Tokenizer } from "../models/tokenizer.js";
import { ConfigError, type Rng } from "../util/index.js";

/** Options of `sampleDiffusion`. */
export interface DiffusionSampleOptions {
  /** L_gen: length of the answer region (mask tokens appended to the prompt). */
  genLength: number;
  /** Denoising steps over the whole answer; a multiple of the number of blocks. Default genLength (one per token). */
  steps?: number;
  /** Length of a semi-autoregressive block; divides genLength. Default genLength (one block). */
  blockLength?: number;
  /** Which proposals stay masked: the least confident (default, LLaDA) or a random choice. */
  remasking?: "lowConfidence" | "random";
  /** Softmax temperature of the proposals; 0 = greedy (default 0, LLaDA's default). */
  temperature?: number;
  /** Source of randomness; one stream is split from it per call. */
  rng: Rng;
  /**
   * Called after every step with copies of the answer regions (B*genLength, mask id where still masked) and of the
   * whole sequences (B*(P + genLength): the left-padded prompts, then the answers).
   */
  onStep?: (info: { block: number; step: number; answers: Int32Array; sequences: Int32Array }) => void;
}

/** One decoded answer. */
export interface DiffusionSample {
  /** Answer tokens up to and including the first eos (all of them when there is none). */
  tokens: number[];
  /** Every position of the answer region (genLength ids). */
  generated: number[];
  /** The step (0 to steps − 1, counted over all blocks) at which each position of the answer region was unmasked. */
  unmaskedAt: number[];
  /** Denoising steps of the whole answer (the `steps` option, resolved). */
  steps: number;
  /** "stop": an eos was generated; "length": none was. */
  finishReason: "stop" | "length";
  /** The decoded answer (special tokens dropped). */
  text: string;
}

/** The number of tokens unmasked at each of `steps` steps for `masked` masks (LLaDA's get_num_transfer_tokens). */
export function transferSchedule(masked: number, steps: number): number[] {
  const base = Math.floor(masked / steps);
  const extra = masked % steps;
  return Array.from({ length: steps }, (_, i) => base + (i < extra ? 1 : 0));
}

/** Validated options with defaults filled in. */
function resolve(o: DiffusionSampleOptions): Required<Omit<DiffusionSampleOptions, "onStep">> {
  const genLength = o.genLength;
  const steps = o.steps ?? genLength;
  const blockLength = o.blockLength ?? genLength;
  const temperature = o.temperature ?? 0;
  const remasking = o.remasking ?? "lowConfidence";
  const bad = (field: string, msg: string) => new ConfigError(`diffusion sampler ${field}: ${msg}`);
  if (!(Number.isInteger(genLength) && genLength > 0)) throw bad("genLength", `${genLength}; a positive integer`);
  if (!(Number.isInteger(blockLength) && blockLength > 0 && genLength % blockLength === 0))
    throw bad("blockLength", `${blockLength} must be a positive integer dividing genLength ${genLength}`);
  const blocks = genLength / blockLength;
  if (!(Number.isInteger(steps) && steps > 0 && steps % blocks === 0))
    throw bad("steps", `${steps} must be a positive multiple of the number of blocks ${blocks}`);
  if (!(temperature >= 0)) throw bad("temperature", `${temperature}; must be >= 0`);
  if (remasking !== "lowConfidence" && remasking !== "random")
    throw bad("remasking", `${JSON.stringify(remasking)}; allowed: lowConfidence, random`);
  return { genLength, steps, blockLength, temperature, remasking, rng: o.rng };
}

/** Decodes one answer per prompt (token ids, none empty) by iterative unmasking (see the file comment). */
export function sampleDiffusion(
  model: DiffusionLM,
  tokenizer: Tokenizer,
  prompts: number[][],
  opts: DiffusionSampleOptions,
): DiffusionSample[] {
  const o = resolve(opts);
  if (prompts.length === 0) return [];
  if (prompts.some((p) => p.length === 0)) throw new ConfigError("sampleDiffusion: a prompt is empty");
  const B = prompts.length;
  const P = Math.max(...prompts.map((p) => p.length));
  const G = o.genLength;
  const T = P + G;
  if (T > model.config.maxSeqLen)
    throw new ConfigError(`sampleDiffusion: prompt ${P} + genLength ${G} exceeds maxSeqLen ${model.config.maxSeqLen}`);
  const { maskId } = model;
  const V = model.config.vocabSize;
  const x = new Int32Array(B * T).fill(maskId); // (B, T): left-padded prompt, then the answer region
  const unmaskedAt = new Int32Array(B * G).fill(-1); // (B, G): the step that unmasked each answer position
  const attn = new Float32Array(B * T).fill(1);
  prompts.forEach((p, b) => {
    const pad = P - p.length;
    for (let j = 0; j < pad; j++) {
      x[b * T + j] = tokenizer.padId;
      attn[b * T + j] = 0;
    }
    p.forEach((id, j) => (x[b * T + pad + j] = id));
  });
  const rng = o.rng.split("diffusion");
  const blocks = G / o.blockLength;
  const perBlock = o.steps / blocks;
  const schedule = transferSchedule(o.blockLength, perBlock); // every row has blockLength masks in each block
  const wasTraining = model.training;
  model.eval();
  try {
    for (let blk = 0; blk < blocks; blk++) {
      for (let s = 0; s < perBlock; s++) {
        // One step's tensors, the logits included, go back to the engine's pool when it ends (tidy, keeping none).
        tidy(
          () => unmaskStep(blk, s),
          () => [],
        );
        if (opts.onStep) {
          const answers = new Int32Array(B * G);
          for (let b = 0; b < B; b++) answers.set(x.subarray(b * T + P, (b + 1) * T), b * G);
          opts.onStep({ block: blk, step: s, answers, sequences: Int32Array.from(x) });
        }
      }
    }
  } finally {
    model.train(wasTraining);
  }
  /** Step s of block blk: one forward pass, then the step's quota of each row's masked positions is unmasked. */
  function unmaskStep(blk: number, s: number): void {
    const lo = P + blk * o.blockLength;
    const hi = lo + o.blockLength;
    const logits = noGrad(() => model.forward(x, B, T, { mask: attn })).data; // (B, T, V)
    for (let b = 0; b < B; b++) {
      const cands: { j: number; tok: number; score: number }[] = [];
      for (let j = lo; j < hi; j++) {
        if (x[b * T + j] !== maskId) continue;
        const row = logits.subarray((b * T + j) * V, (b * T + j + 1) * V);
        const { tok, prob } = propose(row, maskId, o.temperature, rng);
        cands.push({ j, tok, score: o.remasking === "lowConfidence" ? prob : rng.random() });
      }
      cands.sort((a, c) => c.score - a.score || a.j - c.j); // stable: ties go left to right
      for (const c of cands.slice(0, schedule[s]!)) {
        x[b * T + c.j] = c.tok;
        unmaskedAt[b * G + c.j - P] = blk * perBlock + s;
      }
    }
  }
  return prompts.map((_, b) => {
    const generated = Array.from(x.subarray(b * T + P, (b + 1) * T));
    const eos = generated.indexOf(tokenizer.eosId);
    const tokens = eos < 0 ? generated : generated.slice(0, eos + 1);
    return {
      tokens,
      generated,
      unmaskedAt: Array.from(unmaskedAt.subarray(b * G, (b + 1) * G)),
      steps: o.steps,
      finishReason: eos < 0 ? "length" : "stop",
      text: tokenizer.decode(tokens),
    };
  });
}

/** A proposal for one masked position: a draw from softmax(row / T) (argmax at T = 0), never the mask id. */
function propose(row: Float32Array, maskId: number, temperature: number, rng: Rng): { tok: number; prob: number } {
  let mx = -Infinity;
  for (let v = 0; v < row.length; v++) if (v !== maskId && row[v]! > mx) mx = row[v]!;
  let z = 0;
  for (let v = 0; v < row.length; v++) if (v !== maskId) z += Math.exp(row[v]! - mx);
  let tok = -1;
  if (temperature === 0) {
    for (let v = 0; v < row.length; v++) if (v !== maskId && (tok < 0 || row[v]! > row[tok]!)) tok = v;
  } else {
    let zt = 0;
    for (let v = 0; v < row.length; v++) if (v !== maskId) zt += Math.exp((row[v]! - mx) / temperature);
    let u = rng.random() * zt;
    for (let v = 0; v < row.length; v++) {
      if (v === maskId) continue;
      tok = v;
      u -= Math.exp((row[v]! - mx) / temperature);
      if (u <= 0) break;
    }
  }
  return { tok, prob: Math.exp(row[tok]! - mx) / z };
}
