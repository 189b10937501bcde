/**
 * Worker kinds of the Conductor's pool: a built-in checkpoint sampled with the KV-cache sampler (greedy, within its
 * budget, loaded from disk through the task's worker options), and an OpenAI-compatible endpoint: rlvr's own model
 * server (`rlvr serve`, src/serve/model-server) answers exactly what the sampler gives on its chat text; a small
 * node:http server checks the request the worker sends and plays the failure modes (hang, HTTP error, not JSON),
 * which become step errors.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { Rng } from "../../src/util/index.js";
import { createModel } from "../../src/models/registry.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { saveModel } from "../../src/models/checkpoint.js";
import { sample } from "../../src/sampling/sample.js";
import {
  WorkerPool,
  checkpointWorker,
  openaiWorker,
  parseChatReply,
  programWorker,
} from "../../src/rollout/conductor/pool.js";
import { executePlan } from "../../src/rollout/conductor/executor.js";
import { buildWorker } from "../../src/rollout/conductor/task.js";
import { startModelServer } from "../../src/serve/model-server/index.js";
import { defaultChatText } from "../../src/serve/model-server/chat-template.js";

const info = { id: "w", description: "a worker", maxTokens: 12, cost: 1 };
const signal = new AbortController().signal;

describe("the pool", () => {
  it("rejects an empty pool, duplicate ids and bad budgets", () => {
    const p = programWorker({ ...info, run: () => "1" });
    expect(() => new WorkerPool([])).toThrow(/at least one/);
    expect(() => new WorkerPool([p, p])).toThrow(/duplicate worker id "w"/);
    expect(() => programWorker({ ...info, maxTokens: 0, run: () => "" })).toThrow(/maxTokens/);
    expect(() => programWorker({ ...info, cost: -1, run: () => "" })).toThrow(/cost/);
    expect(new WorkerPool([p, { ...p, id: "v", description: "another" }]).describe()).toBe(
      "0 w: a worker\n1 v: another",
    );
  });
  it("a program worker's output is cut to its budget", async () => {
    const p = programWorker({ ...info, maxTokens: 3, run: () => "123456" });
    expect(await p.generate({ prompt: "", subtask: "", context: [], signal })).toEqual({ text: "123", tokens: 3 });
  });
});

describe("a built-in checkpoint worker", () => {
  const model = createModel("micro-char", new Rng(4)).model.eval();
  const tokenizer = new CharTokenizer();
  it("samples greedily with the KV-cache sampler, within its token budget", async () => {
    const w = checkpointWorker({ ...info, model, tokenizer });
    const call = { prompt: "Task: add\nAnswer:", subtask: "add", context: [], signal };
    const a = await w.generate(call);
    const ref = sample(model, tokenizer, [[tokenizer.bosId, ...tokenizer.encode(call.prompt)]], {
      maxNewTokens: 12,
      temperature: 0,
      rng: new Rng(0),
    })[0]!;
    expect(a.text).toBe(ref.text);
    expect(a.tokens).toBe(ref.tokens.length);
    expect(a.tokens).toBeLessThanOrEqual(12);
    expect(await w.generate(call)).toEqual(a); // greedy: the same chain twice
  });
  it("answers concurrent calls in batches, each row as it would be answered alone", async () => {
    const w = checkpointWorker({ ...info, model, tokenizer, maxBatch: 2 });
    const prompts = [
      "Task: add\nAnswer:",
      "Step 0: 1\nTask: multiply the numbers\nAnswer:",
      "x",
      "Task: 12*3\nAnswer:",
      "ab",
    ];
    const replies = await Promise.all(
      prompts.map((prompt) => w.generate({ prompt, subtask: "", context: [], signal })),
    );
    prompts.forEach((p, i) => {
      const ref = sample(model, tokenizer, [[tokenizer.bosId, ...tokenizer.encode(p)]], {
        maxNewTokens: 12,
        temperature: 0,
        rng: new Rng(0),
      })[0]!;
      expect(replies[i]).toEqual({ text: ref.text, tokens: ref.tokens.length });
    });
    expect(() => checkpointWorker({ ...info, model, tokenizer, maxBatch: 0 })).toThrow(/maxBatch/);
    const long = "9".repeat(model.config.maxSeqLen);
    await expect(w.generate({ prompt: long, subtask: "", context: [], signal })).rejects.toThrow(/no room/);
  });
  it("loads from a checkpoint directory named in the task's worker options", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-worker-"));
    saveModel(dir, model, tokenizer);
    const w = buildWorker({ ...info, source: { type: "checkpoint", path: dir, temperature: 0 } });
    const direct = checkpointWorker({ ...info, model, tokenizer });
    const call = { prompt: "Step 0: 12+3\nTask: add\nAnswer:", subtask: "add", context: ["12+3"], signal };
    expect(await w.generate(call)).toEqual(await direct.generate(call));
  });
});

describe("an OpenAI-compatible worker", () => {
  let server: Server;
  let base = "";
  const seen: { url: string; auth: string | undefined; body: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", () => {
        const body = JSON.parse(raw) as { model: string; messages: { content: string }[] };
        seen.push({ url: req.url!, auth: req.headers.authorization, body });
        if (body.model === "hang") return; // never answers
        if (body.model === "broken") return void res.writeHead(503).end("overloaded");
        if (body.model === "garbage") return void res.writeHead(200).end("<html>");
        const content = `echo:${body.messages[0]!.content.split("\n").at(-2)}`;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ choices: [{ message: { role: "assistant", content } }], usage: { completion_tokens: 7 } }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it("sends one user message with the budget and reads content and usage", async () => {
    const w = openaiWorker({ ...info, baseUrl: base, model: "tiny", apiKey: "k1" });
    const reply = await w.generate({
      prompt: "Step 0: 5\nTask: add 1\nAnswer:",
      subtask: "add 1",
      context: ["5"],
      signal,
    });
    expect(reply).toEqual({ text: "echo:Task: add 1", tokens: 7 });
    const req = seen.at(-1)!;
    expect(req.url).toBe("/v1/chat/completions");
    expect(req.auth).toBe("Bearer k1");
    expect(req.body).toEqual({
      model: "tiny",
      messages: [{ role: "user", content: "Step 0: 5\nTask: add 1\nAnswer:" }],
      max_tokens: 12,
      temperature: 0,
    });
  });

  it("a hanging endpoint times out, an HTTP error and a non-JSON reply fail their steps", async () => {
    const pool = new WorkerPool(
      ["hang", "broken", "garbage", "tiny"].map((model) => openaiWorker({ ...info, id: model, baseUrl: base, model })),
    );
    const chain = await executePlan(
      { modelIds: [0, 1, 2, 3], subtasks: ["a", "b", "c", "d"], accessList: [[], [], [], []] },
      pool,
      { timeoutMs: 300 },
    );
    expect(chain.steps[0]!.error).toMatch(/hang: timeout/);
    expect(chain.steps[1]!.error).toMatch(/HTTP 503: overloaded/);
    expect(chain.steps[2]!.error).toMatch(/not JSON/);
    expect(chain.steps[3]!.status).toBe("ok");
    expect(chain.answer).toBe("echo:Task: d");
  });

  it("usage is estimated when the server gives none; a reply without content is an error", () => {
    expect(parseChatReply(JSON.stringify({ choices: [{ message: { content: "12345678" } }] }), "s")).toEqual({
      text: "12345678",
      tokens: 2,
    });
    expect(() => parseChatReply(JSON.stringify({ choices: [] }), "s")).toThrow(/no choices\[0\]\.message\.content/);
  });

  it("an API key is read from the named environment variable, and a missing one is a config error", () => {
    const src = {
      type: "openai" as const,
      baseUrl: base,
      model: "tiny",
      apiKeyEnv: "RLVR_TEST_WORKER_KEY",
      temperature: 0,
    };
    expect(() => buildWorker({ ...info, source: src }, {})).toThrow(/RLVR_TEST_WORKER_KEY is unset/);
    expect(buildWorker({ ...info, source: src }, { RLVR_TEST_WORKER_KEY: "x" }).id).toBe("w");
  });
});

describe("a worker behind rlvr's own model server", () => {
  it("answers what the sampler gives greedily on the server's chat text, with the server's token count", async () => {
    const tokenizer = new CharTokenizer();
    const { model } = createModel("micro-char", new Rng(6));
    const dir = mkdtempSync(join(tmpdir(), "rlvr-served-worker-"));
    saveModel(dir, model, tokenizer);
    const server = await startModelServer(dir, { port: 0, host: "127.0.0.1", batchWindowMs: 5 });
    try {
      const w = openaiWorker({ ...info, baseUrl: `${server.url}/v1`, model: server.host.name });
      const prompt = "Step 0: 12+3\nTask: add\nAnswer:";
      const reply = await w.generate({ prompt, subtask: "add", context: ["12+3"], signal });
      const text = defaultChatText([{ role: "user", content: prompt }]);
      const ref = sample(model.eval(), tokenizer, [[tokenizer.bosId, ...tokenizer.encode(text)]], {
        maxNewTokens: info.maxTokens,
        temperature: 0,
        rng: new Rng(0),
      })[0]!;
      expect(reply.text).toBe(ref.text);
      expect(reply.tokens).toBe(ref.tokens.length);
    } finally {
      await server.close();
    }
  });
});
