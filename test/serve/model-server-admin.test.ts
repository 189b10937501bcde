/**
 * The model server's other surfaces: weight reload (`POST /v1/load_weights`), OpenAI-style error objects for bad
 * requests as the official client sees them, the API key, graceful close with a stream in flight, and
 * `rlvr serve` in a child process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { modelServerOptionsFromFlags } from "../../src/cli/commands/serve.js";
import { createModel } from "../../src/models/registry.js";
import { saveModel } from "../../src/models/checkpoint.js";
import type { RunningModelServer } from "../../src/serve/model-server/index.js";
import { Rng } from "../../src/util/index.js";
import { CONTEXT, client, rlvrSample, serve, tinyCheckpoint } from "./model-server-helpers.js";

const MODEL = "tiny";
let server: RunningModelServer;
let api: OpenAI;

beforeAll(async () => {
  server = await serve(tinyCheckpoint(3), { modelName: MODEL, batchWindowMs: 0 });
  api = client(server);
});
afterAll(() => server?.close());

/** POSTs a raw body; returns status and parsed JSON. */
async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  return {
    status: res.status,
    body: (await res.json()) as { error: Record<string, unknown> } & Record<string, unknown>,
  };
}

describe("model server: load_weights", () => {
  it("swaps in new weights: the same seeded request now gives the new checkpoint's sample", async () => {
    const ask = () =>
      api.completions
        .create({ model: MODEL, prompt: "weights", max_tokens: 10, seed: 3, logprobs: 0 })
        .then((r) => r.choices[0]!);
    const before = await ask();
    const next = tinyCheckpoint(4);
    const res = await post("/v1/load_weights", JSON.stringify({ path: next }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "ok", model: MODEL, path: next, weights_version: 1 });
    const after = await ask();
    const [want] = rlvrSample(server, "weights", { seed: 3, temperature: 1, maxNewTokens: 10 }); // the new weights
    expect(after.text).toBe(want!.text);
    expect(after.logprobs!.token_logprobs![0]).toBeCloseTo(want!.logprobs[0]!, 10);
    expect(after.logprobs!.token_logprobs![0]).not.toBeCloseTo(before.logprobs!.token_logprobs![0]!, 4);
    expect((await api.models.list()).data[0]).toMatchObject({ weights_version: 1 });
  });

  it("refuses a checkpoint of another shape, and a missing folder, keeping the served weights", async () => {
    const { model, tokenizer } = createModel("tiny-char-gpt", new Rng(1), {
      nLayers: 2,
      dModel: 32,
      dFf: 64,
      maxSeqLen: CONTEXT,
    });
    const other = join(tinyCheckpoint(5), "..", "bigger");
    saveModel(other, model, tokenizer);
    const bad = await post("/v1/load_weights", JSON.stringify({ path: other }));
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: "invalid_request_error", param: "path", code: "config_mismatch" });
    const missing = await post("/v1/load_weights", JSON.stringify({ path: "/no/such/checkpoint" }));
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: "bad_checkpoint" });
    expect(server.host.version).toBe(1);
  });
});

describe("model server: OpenAI-style errors", () => {
  /** The client's error for a request, with its status and OpenAI fields. */
  async function errorOf(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    return err as InstanceType<typeof OpenAI.APIError>;
  }

  it("unknown model: 404 model_not_found", async () => {
    const e = await errorOf(api.completions.create({ model: "gpt-4o", prompt: "x", max_tokens: 2 }));
    expect(e).toBeInstanceOf(OpenAI.NotFoundError);
    expect(e).toMatchObject({ status: 404, code: "model_not_found", param: "model", type: "invalid_request_error" });
  });

  it("negative max_tokens: 400 naming max_tokens", async () => {
    const e = await errorOf(api.completions.create({ model: MODEL, prompt: "x", max_tokens: -1 }));
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e).toMatchObject({ status: 400, param: "max_tokens" });
  });

  it("oversized prompt, and prompt + max_tokens past the context: 400 context_length_exceeded", async () => {
    const long = await errorOf(api.completions.create({ model: MODEL, prompt: "y".repeat(CONTEXT), max_tokens: 1 }));
    expect(long).toMatchObject({ status: 400, code: "context_length_exceeded", param: "prompt" });
    const chat = await errorOf(
      api.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "z".repeat(CONTEXT) }] }),
    );
    expect(chat).toMatchObject({ status: 400, code: "context_length_exceeded", param: "messages" });
    const budget = await errorOf(api.completions.create({ model: MODEL, prompt: "abc", max_tokens: CONTEXT }));
    expect(budget).toMatchObject({ status: 400, code: "context_length_exceeded", param: "max_tokens" });
  });

  it("token ids outside the vocabulary, unsupported knobs, and bad n: 400 naming the field", async () => {
    const ids = await errorOf(api.completions.create({ model: MODEL, prompt: [1, 99999], max_tokens: 2 }));
    expect(ids).toMatchObject({ status: 400, code: "invalid_token_id", param: "prompt" });
    const echo = await errorOf(api.completions.create({ model: MODEL, prompt: "x", max_tokens: 2, echo: true }));
    expect(echo).toMatchObject({ status: 400, code: "unsupported", param: "echo" });
    const n = await errorOf(api.completions.create({ model: MODEL, prompt: "x", max_tokens: 2, n: 1000 }));
    expect(n).toMatchObject({ status: 400, param: "n" });
  });

  it("bad JSON and a non-object body: 400 with an error object; unknown route: 404", async () => {
    const bad = await post("/v1/completions", "{not json");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: "invalid_request_error", code: "bad_json" });
    expect(String(bad.body.error.message)).toMatch(/not valid JSON/);
    const arr = await post("/v1/chat/completions", "[1,2]");
    expect(arr.status).toBe(400);
    const route = await post("/v1/embeddings", "{}");
    expect(route.status).toBe(404);
    expect(route.body.error).toMatchObject({ code: "not_found" });
  });
});

describe("model server: API key and close", () => {
  it("with an API key, /v1 needs it (401 invalid_api_key); /health does not", async () => {
    const locked = await serve(tinyCheckpoint(3), { modelName: MODEL, apiKey: "s3cret" });
    try {
      const e = await client(locked, "wrong")
        .models.list()
        .catch((err: unknown) => err);
      expect(e).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(e).toMatchObject({ status: 401, code: "invalid_api_key" });
      expect((await client(locked, "s3cret").models.list()).data[0]!.id).toBe(MODEL);
      expect((await fetch(locked.url + "/health")).status).toBe(200);
    } finally {
      await locked.close();
    }
  });

  it("close lets a stream in flight finish before the server stops", async () => {
    const s = await serve(tinyCheckpoint(3), { modelName: MODEL });
    const stream = await client(s).completions.create({ model: MODEL, prompt: "go", max_tokens: 30, stream: true });
    const closed = s.close();
    let tokens = 0;
    let finish: string | null = null;
    for await (const chunk of stream) {
      tokens += chunk.choices.filter((c) => c.finish_reason === null).length;
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    await closed;
    expect(finish).not.toBeNull();
    expect(tokens).toBeGreaterThan(0);
  });
});

describe("rlvr serve", () => {
  it("reads flags as numbers and the API key from the environment", () => {
    expect(
      modelServerOptionsFromFlags({ port: "0", batchWindowMs: "2", host: "::1" }, { RLVR_MODEL_SERVER_KEY: "k" }),
    ).toEqual({
      port: 0,
      batchWindowMs: 2,
      host: "::1",
      apiKey: "k",
    });
  });

  it("serves a checkpoint from the CLI and exits 0 on SIGTERM", async () => {
    const root = resolve(__dirname, "..", "..");
    const dir = tinyCheckpoint(3);
    const args = ["--import", "tsx", join(root, "test/cli/run-cli.ts"), "serve", dir, "--port", "0"];
    const child: ChildProcess = spawn(process.execPath, args, { cwd: root });
    let out = "";
    child.stderr!.on("data", (d) => (out += String(d)));
    try {
      const url = await new Promise<string>((ok, fail) => {
        child.stdout!.on("data", (d) => {
          out += String(d);
          const m = /listening on (http:\/\/\S+) /.exec(out);
          if (m) ok(m[1]!);
        });
        child.once("exit", (code) => fail(new Error(`exited ${code} before listening:\n${out}`)));
      });
      const models = (await (await fetch(url + "/v1/models")).json()) as { data: { id: string }[] };
      expect(models.data[0]!.id).toBe("tiny-3");
      const code = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      expect(await code).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  }, 30_000);
});
