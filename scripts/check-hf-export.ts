/**
 * `npm run check:hf-export`: exports seeded llama (char tokenizer, tied, head width 32), gpt2 (char tokenizer, untied
 * and tied) and qwen2 (byte-level BPE fixture tokenizer) models with `rlvr export --format safetensors-hf`'s code,
 * then has Python `transformers` load each folder with `AutoModelForCausalLM` / `AutoTokenizer.from_pretrained` and
 * compare (scripts/check-hf-export.py): token ids of a few prompts, and logits to 1e-4. Give a checkpoint folder as an
 * argument to check that one as well. Skips when the project venv (.venv/bin/python, with torch and transformers from
 * the local wheel index) is absent; not part of `npm test`.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Rng } from "../src/util/index.js";
import { noGrad } from "../src/engine/index.js";
import {
  CharTokenizer,
  Transformer,
  loadHfTokenizer,
  loadModel,
  parseTransformerConfig,
  type Tokenizer,
} from "../src/models/index.js";
import { exportHf } from "../src/models/export/index.js";
import { promptIds } from "../src/rollout/groups.js";

const PYTHON = join(".venv", "bin", "python");
const PROMPTS = ["Hello world", "1 + 1 = 2\nQ: 7 * 6?", "The quick brown fox", "x"];

if (!existsSync(PYTHON)) {
  console.log(`check:hf-export skipped: ${PYTHON} not found (create the project venv with torch and transformers)`);
  process.exit(0);
}

const out = mkdtempSync(join(tmpdir(), "rlvr-hf-export-"));
const cases: { name: string; model: Transformer; tokenizer: Tokenizer }[] = [];
const base = { dModel: 64, nLayers: 2, nHeads: 4, dFf: 128, maxSeqLen: 64 };
const make = (name: string, cfg: Record<string, unknown>, tokenizer: Tokenizer, seed: number) => {
  const model = new Transformer(
    parseTransformerConfig({ ...base, vocabSize: tokenizer.vocabSize, ...cfg }),
    new Rng(seed),
  );
  const rng = new Rng(seed + 1);
  // biases and norms non-trivial
  for (const p of model.parameters()) for (let i = 0; i < p.data.length; i++) p.data[i]! += 0.05 * rng.normal();
  model.eval();
  cases.push({ name, model, tokenizer });
};
const bpe = loadHfTokenizer(join("test", "fixtures", "parity", "llama", "tokenizer.json"), { eosId: 297, padId: 297 });
make("llama", { arch: "llama", nKvHeads: 2, headDim: 32, tieEmbeddings: true }, new CharTokenizer(), 1);
make("gpt2", { arch: "gpt2", nKvHeads: 4, tieEmbeddings: false }, new CharTokenizer(), 2);
make("gpt2-tied", { arch: "gpt2", nKvHeads: 4, tieEmbeddings: true }, new CharTokenizer(), 3);
make("qwen2", { arch: "llama", nKvHeads: 2, qkvBias: true, tieEmbeddings: false, ropeTheta: 1e6 }, bpe, 4);
for (const dir of process.argv.slice(2)) {
  const { model, tokenizer } = loadModel(dir);
  cases.push({ name: dir.replace(/[^A-Za-z0-9]+/g, "_"), model, tokenizer });
}

const dirs: string[] = [];
for (const { name, model, tokenizer } of cases) {
  const dir = join(out, name);
  exportHf(dir, model, tokenizer);
  const rows = PROMPTS.map((p) => promptIds(tokenizer, p));
  const logits = rows.map((ids) => noGrad(() => Array.from(model.forward(Int32Array.from(ids), 1, ids.length).data)));
  writeFileSync(
    join(out, `${name}.expected.json`),
    JSON.stringify({ prompts: PROMPTS, bos: tokenizer.bosId, ids: rows, logits, vocab: model.config.vocabSize }),
  );
  dirs.push(dir);
}
const r = spawnSync(PYTHON, [join("scripts", "check-hf-export.py"), ...dirs], { stdio: "inherit" });
rmSync(out, { recursive: true, force: true });
process.exit(r.status ?? 1);
