/**
 * Helpers of the model-server tests: tiny GPT-2-shaped char checkpoints saved to temporary folders, a server on an
 * ephemeral loopback port, the official `openai` client pointed at it, and rlvr's own sampler for the expected
 * outputs.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { noGrad } from "../../src/engine/index.js";
import { saveModel } from "../../src/models/checkpoint.js";
import { createModel } from "../../src/models/registry.js";
import { promptIds } from "../../src/rollout/groups.js";
import { sample, type SampledSequence } from "../../src/sampling/sample.js";
import { startModelServer, type RunningModelServer } from "../../src/serve/model-server/index.js";
import { Rng } from "../../src/util/index.js";

/** Context of the test models: short, so that oversized prompts are cheap to build. */
export const CONTEXT = 48;

/** Saves a 1-layer GPT-2-shaped char model (weights from `seed`) to a fresh folder; returns the folder. */
export function tinyCheckpoint(seed: number, chatTemplate?: string): string {
  const { model, tokenizer } = createModel("tiny-char-gpt", new Rng(seed), {
    nLayers: 1,
    dModel: 32,
    nHeads: 4,
    nKvHeads: 4,
    dFf: 64,
    maxSeqLen: CONTEXT,
  });
  const dir = join(mkdtempSync(join(tmpdir(), "rlvr-model-server-")), `tiny-${seed}`);
  saveModel(dir, model, tokenizer);
  if (chatTemplate !== undefined)
    writeFileSync(
      join(dir, "tokenizer_config.json"),
      JSON.stringify({ chat_template: chatTemplate, bos_token: "<bos>" }),
    );
  return dir;
}

/** Starts a server for `dir` on an ephemeral loopback port. */
export function serve(dir: string, options: Record<string, unknown> = {}): Promise<RunningModelServer> {
  return startModelServer(dir, { port: 0, host: "127.0.0.1", batchWindowMs: 20, ...options });
}

/** The official client for `server` (no retries, so error tests are quick). */
export function client(server: RunningModelServer, apiKey = "unused"): OpenAI {
  return new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0 });
}

/** rlvr's own sampler on `n` copies of the text prompt (bos + encoded text), with `new Rng(seed)`. */
export function rlvrSample(
  server: RunningModelServer,
  prompt: string | number[],
  opts: { n?: number; seed: number; temperature: number; maxNewTokens: number; stop?: string[] },
): SampledSequence[] {
  const { model, tokenizer } = server.host.current;
  const ids = typeof prompt === "string" ? promptIds(tokenizer, prompt) : prompt;
  const rows = Array.from({ length: opts.n ?? 1 }, () => ids);
  return noGrad(() =>
    sample(model, tokenizer, rows, {
      maxNewTokens: opts.maxNewTokens,
      temperature: opts.temperature,
      rng: new Rng(opts.seed),
      ...(opts.stop ? { stop: opts.stop } : {}),
    }),
  );
}

/** Extra (vLLM) request fields, typed loosely for the client's params. */
export const vllm = (fields: Record<string, unknown>): object => fields;
