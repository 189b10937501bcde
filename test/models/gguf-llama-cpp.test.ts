/**
 * Proof with a real client: llama.cpp (through node-llama-cpp 3.21.1, CPU build, no downloads) loads the GGUF files
 * `exportGguf` writes for the llama, gpt2 and qwen2 shapes, and its greedy continuations of 20 prompts equal rlvr's
 * for F32 and agree in at least 95% of tokens for Q8_0 (F16 is held to the same bar). Prompts go in as token ids
 * (rlvr's `promptIds`), so the comparison is of the models; llama.cpp's own tokenization of the prompt text is
 * compared with rlvr's separately. Skips, saying why, only if node-llama-cpp cannot load at all.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportGguf, type GgufExportType } from "../../src/models/export/gguf.js";
import { promptIds } from "../../src/rollout/groups.js";
import { PROMPTS, rlvrGreedy, testModels } from "./gguf-helpers.js";

type NodeLlamaCpp = typeof import("node-llama-cpp");
type Llama = Awaited<ReturnType<NodeLlamaCpp["getLlama"]>>;

let lib: NodeLlamaCpp | null = null;
let llama: Llama | null = null;
let whyNot = "";
try {
  lib = await import("node-llama-cpp");
  llama = await lib.getLlama({ gpu: false, build: "never", logLevel: lib.LlamaLogLevel.error, progressLogs: false });
} catch (err) {
  whyNot = `node-llama-cpp cannot load here (${(err as Error).message}); skipping the llama.cpp GGUF check`;
  console.warn(whyNot);
}

const MAX_NEW = 12;
const dir = mkdtempSync(join(tmpdir(), "rlvr-gguf-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** llama.cpp's greedy continuation of `ids`, ending at eos (kept) or after `maxNew` tokens. */
async function llamaGreedy(path: string, prompts: number[][], eosId: number) {
  const model = await llama!.loadModel({ modelPath: path, gpuLayers: 0 });
  const context = await model.createContext({
    contextSize: 128,
    sequences: 1,
    threads: 1,
    experimentalKvCacheKeyType: "F32", // llama.cpp's default F16 cache rounds keys and values
    experimentalKvCacheValueType: "F32",
  });
  const out: number[][] = [];
  const tokenized: number[][] = [];
  try {
    const sequence = context.getSequence();
    for (const ids of prompts) {
      await sequence.clearHistory();
      const got: number[] = [];
      for await (const token of sequence.evaluate(ids as never[], { temperature: 0, yieldEogToken: true })) {
        got.push(token as number);
        if (token === eosId || got.length >= MAX_NEW) break;
      }
      out.push(got);
    }
    for (const text of PROMPTS) tokenized.push(model.tokenize(text, false).map(Number));
  } finally {
    await context.dispose();
    await model.dispose();
  }
  return { out, tokenized };
}

const cases = llama ? testModels(100) : [];

describe.skipIf(!llama)("GGUF export runs in llama.cpp (node-llama-cpp, CPU)", () => {
  beforeAll(() => expect(whyNot).toBe(""));
  describe.each(cases)("$name", ({ name, model, tokenizer }) => {
    const prompts = PROMPTS.map((p) => promptIds(tokenizer, p));
    const expected = rlvrGreedy(model, tokenizer, prompts, MAX_NEW);

    it("tokenizes the prompts as rlvr does", async () => {
      const path = join(dir, `${name}-tok.gguf`);
      exportGguf(path, model, tokenizer, { type: "f32" });
      const { tokenized } = await llamaGreedy(path, [], tokenizer.eosId);
      expect(tokenized).toEqual(PROMPTS.map((p) => tokenizer.encode(p)));
    });

    it.each(["f32", "f16", "q8_0"] as GgufExportType[])("%s: greedy continuations agree", async (type) => {
      const path = join(dir, `${name}-${type}.gguf`);
      exportGguf(path, model, tokenizer, { type });
      const { out } = await llamaGreedy(path, prompts, tokenizer.eosId);
      let same = 0,
        total = 0;
      for (let i = 0; i < prompts.length; i++) {
        const a = expected[i]!,
          b = out[i]!;
        total += Math.max(a.length, b.length);
        for (let j = 0; j < Math.min(a.length, b.length); j++) if (a[j] === b[j]) same++;
      }
      const agreement = same / total;
      console.log(`${name} ${type}: ${same}/${total} tokens agree (${(100 * agreement).toFixed(1)}%)`);
      if (type === "f32") expect(out).toEqual(expected);
      else expect(agreement).toBeGreaterThanOrEqual(0.95);
    });
  });
});
