/** Shared by the GGUF tests: small seeded models, twenty prompts, and rlvr's own greedy continuations. */
import { join } from "node:path";
import { Rng } from "../../src/util/index.js";
import { noGrad } from "../../src/engine/index.js";
import {
  CharTokenizer,
  Transformer,
  loadHfTokenizer,
  parseTransformerConfig,
  type Tokenizer,
  type TransformerConfigInput,
} from "../../src/models/index.js";
import { sample } from "../../src/sampling/sample.js";
import { trainSft } from "../../src/trainer/sft.js";

/** The byte-level BPE tokenizer of the parity fixtures (300 ids, GPT-2 pre-tokenizer). */
export function fixtureTokenizer(): Tokenizer {
  return loadHfTokenizer(join(import.meta.dirname, "..", "fixtures", "parity", "llama", "tokenizer.json"), {
    eosId: 297,
    padId: 297,
  });
}

/** A model of the test, its tokenizer, and a name. */
export interface TestModel {
  name: string;
  model: Transformer;
  tokenizer: Tokenizer;
}

/**
 * The three exported shapes, seeded: llama (GQA, head width 32 ≠ dModel/nHeads, tied head, char tokenizer), gpt2
 * (GQA, untied head, char tokenizer) and qwen2 (q/k/v biases, untied head, RoPE base 5e5, the fixture's BPE
 * tokenizer). With `trainSteps` > 0 each is first trained
 * with SFT to answer a prompt with its reverse: random models have near-ties in their greedy choices that any
 * rounding flips, trained ones have the margins real models have.
 */
export function testModels(trainSteps = 0): TestModel[] {
  const base = { dModel: 64, nLayers: 2, nHeads: 4, dFf: 128, maxSeqLen: 128, normEps: 1e-5 };
  const examples = PROMPTS.map((p) => ({ prompt: p, completion: ` ${[...p].reverse().join("").slice(0, 10)}.` }));
  const make = (name: string, cfg: Partial<TransformerConfigInput>, tokenizer: Tokenizer, seed: number) => {
    const config = parseTransformerConfig({ ...base, vocabSize: tokenizer.vocabSize, ...cfg });
    const model = new Transformer(config, new Rng(seed));
    if (trainSteps > 0)
      trainSft(model, tokenizer, examples, { steps: trainSteps, batchSize: 10, lr: 1e-2, rng: new Rng(seed) });
    model.eval();
    return { name, model, tokenizer };
  };
  return [
    make(
      "llama",
      { arch: "llama", nKvHeads: 2, headDim: 32, tieEmbeddings: true, ropeTheta: 10000 },
      new CharTokenizer(),
      1,
    ),
    make("gpt2", { arch: "gpt2", nKvHeads: 2, tieEmbeddings: false }, new CharTokenizer(), 2),
    make(
      "qwen2",
      { arch: "llama", nKvHeads: 2, qkvBias: true, tieEmbeddings: false, ropeTheta: 5e5 },
      fixtureTokenizer(),
      3,
    ),
  ];
}

/** Twenty short prompts. */
export const PROMPTS = [
  "Hello",
  "The cat",
  "1 + 1 =",
  "abc",
  "What is 7 * 6?",
  "Once upon a time",
  "x",
  "def f(x):",
  "Q: capital of France?\nA:",
  "the the the",
  "0123456789",
  "Answer: ",
  "rlvr",
  "Zebra",
  "[1, 2, 3]",
  "sum",
  "A quick brown fox",
  "print('hi')",
  "? ! .",
  "Step 1:",
];

/** rlvr's greedy continuation (ending at eos, kept) of each prompt's ids. */
export function rlvrGreedy(model: Transformer, tokenizer: Tokenizer, prompts: number[][], maxNewTokens: number) {
  return noGrad(() =>
    sample(model, tokenizer, prompts, { maxNewTokens, temperature: 0, rng: new Rng(0) }).map((s) => s.tokens),
  );
}
