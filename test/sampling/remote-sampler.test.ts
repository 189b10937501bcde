/**
 * The remote sampler against `rlvr serve` on loopback: token ids in and out give exactly what rlvr's own sampler
 * gives with the same seed; re-tokenised text warns once and counts exactly the rows whose ids do not survive a
 * decode/encode round trip; errors name the URL, the field or the server's message. Also the recipe rules of
 * `sampler: {type: openai}` and `algorithm.offPolicy`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer } from "node:http";
import { noGrad } from "../../src/engine/index.js";
import { sample } from "../../src/sampling/sample.js";
import { RemoteSampler, RemoteSamplerError, type OpenAiSamplerConfig } from "../../src/sampling/remote/index.js";
import { sampleGroupsRemote } from "../../src/rollout/remote-groups.js";
import { promptIds } from "../../src/rollout/groups.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import type { RunningModelServer } from "../../src/serve/model-server/index.js";
import { ConfigError, Rng } from "../../src/util/index.js";
import { serve, tinyPolicy } from "./remote-helpers.js";
import type { Example } from "../../src/tasks/types.js";

let server: RunningModelServer;
const cfg = (extra: Partial<OpenAiSamplerConfig> = {}): OpenAiSamplerConfig => ({
  type: "openai",
  baseUrl: `${server.url}/v1`,
  model: "policy",
  apiKeyEnv: "RLVR_SAMPLER_API_KEY",
  temperature: 1,
  topK: 0,
  topP: 1,
  tokenIds: "auto",
  pushWeights: true,
  timeoutMs: 30_000,
  ...extra,
});
beforeAll(async () => (server = await serve(tinyPolicy(3))));
afterAll(() => server?.close());

const PROMPTS = ["12+3=", "7+8="];
const opts = { n: 3, maxNewTokens: 8, temperature: 1, seed: 1234, stop: ["}"] };

/** rlvr's own sampler on the same rows (prompt-major, n each) with `new Rng(seed)`. */
function local() {
  const { model, tokenizer } = server.host.current;
  const rows = PROMPTS.flatMap((p) => Array.from({ length: opts.n }, () => promptIds(tokenizer, p)));
  return noGrad(() => sample(model, tokenizer, rows, { ...opts, rng: new Rng(opts.seed) }));
}

describe("RemoteSampler", () => {
  it("token ids in and out: the tokens, log-probs, finish reasons and text rlvr's sampler gives with the seed", async () => {
    const tok = server.host.current.tokenizer;
    const s = await RemoteSampler.connect(cfg(), tok, () => {});
    const got = await s.sample(
      PROMPTS.map((p) => ({ ids: promptIds(tok, p), text: p })),
      opts,
    );
    const want = local();
    expect(got.map((g) => g.tokens)).toEqual(want.map((w) => w.tokens));
    expect(got.map((g) => g.logprobs)).toEqual(want.map((w) => w.logprobs));
    expect(got.map((g) => g.finishReason)).toEqual(want.map((w) => w.finishReason));
    expect(got.map((g) => g.text)).toEqual(want.map((w) => w.text));
    expect(s.stats).toEqual({ completions: 6, retokenized: 0, mismatched: 0 });
  });

  it("text only: re-tokenised, one warning, and exactly the rows that do not round-trip are misaligned", async () => {
    const tok = server.host.current.tokenizer;
    const warnings: string[] = [];
    const s = await RemoteSampler.connect(cfg({ tokenIds: "never" }), tok, (w) => warnings.push(w));
    const prompts = PROMPTS.map((p) => ({ ids: promptIds(tok, p), text: p }));
    const manyOpts = { ...opts, n: 16, maxNewTokens: 12 };
    const got = [...(await s.sample(prompts, manyOpts)), ...(await s.sample(prompts, { ...manyOpts, seed: 99 }))];
    expect(warnings).toHaveLength(1);
    const { model } = server.host.current;
    const rows = PROMPTS.flatMap((p) => Array.from({ length: 16 }, () => promptIds(tok, p)));
    const want = [1234, 99].flatMap((seed) =>
      noGrad(() => sample(model, tok, rows, { ...manyOpts, stop: ["}"], rng: new Rng(seed) })),
    );
    // The server's text drops specials (<pad>, <bos>, <eos>) and is cut before "}": a row re-tokenises to its ids
    // (a final eos restored) exactly when it has neither mid-row specials nor a stop-string cut.
    const survives = want.map((w) => {
      const body = w.finishReason === "stop" && w.tokens.at(-1) === tok.eosId ? w.tokens.slice(0, -1) : w.tokens;
      return body.every((id) => id > 2) && !w.text.includes("}");
    });
    expect(got.map((g) => g.logprobs !== null)).toEqual(survives);
    got.forEach((g, i) => {
      if (survives[i]) {
        expect(g.tokens).toEqual(want[i]!.tokens);
        expect(g.logprobs).toEqual(want[i]!.logprobs);
      }
    });
    expect(survives.some((x) => !x) && survives.some((x) => x)).toBe(true); // both kinds occur in this sample
    expect(s.stats).toEqual({ completions: 64, retokenized: 64, mismatched: survives.filter((x) => !x).length });
  });

  it("errors name the field, the URL or the server's message", async () => {
    const tok = server.host.current.tokenizer;
    await expect(RemoteSampler.connect(cfg({ model: "nope" }), tok, () => {})).rejects.toThrow(
      /sampler\.model: "nope" is not served by .* \(it serves: policy\)/,
    );
    await expect(RemoteSampler.connect(cfg({ baseUrl: "http://127.0.0.1:9/v1" }), tok, () => {})).rejects.toThrow(
      RemoteSamplerError,
    );
    await expect(RemoteSampler.connect(cfg({ baseUrl: "http://127.0.0.1:9/v1" }), tok, () => {})).rejects.toThrow(
      /GET http:\/\/127\.0\.0\.1:9\/v1\/models failed/,
    );
    const s = await RemoteSampler.connect(cfg(), tok, () => {});
    await expect(
      s.sample([{ ids: promptIds(tok, "1+1="), text: "1+1=" }], { ...opts, maxNewTokens: 500 }),
    ).rejects.toThrow(/answered 400: .*context/);
    await expect(s.loadWeights("/no/such/folder")).rejects.toThrow(/load_weights answered 400/);
  });

  it("apiKeyEnv names the variable holding the bearer token; timeoutMs bounds a request", async () => {
    const tok = server.host.current.tokenizer;
    const locked = await serve(tinyPolicy(3), { apiKey: "s3cret" });
    try {
      const c = cfg({ baseUrl: `${locked.url}/v1`, apiKeyEnv: "RLVR_TEST_REMOTE_KEY" });
      await expect(RemoteSampler.connect(c, tok, () => {})).rejects.toThrow(/answered 401/);
      process.env.RLVR_TEST_REMOTE_KEY = "s3cret";
      await expect(RemoteSampler.connect(c, tok, () => {})).resolves.toBeInstanceOf(RemoteSampler);
    } finally {
      delete process.env.RLVR_TEST_REMOTE_KEY;
      await locked.close();
    }
    const s = await RemoteSampler.connect(cfg({ timeoutMs: 1 }), tok, () => {}).catch((e: Error) => e);
    expect(String(s)).toMatch(/GET .*\/v1\/models failed: .*(timeout|aborted)/i);
  });

  it("auto, on a server that drops token_ids (a proxy in front of rlvr serve): warns once, re-tokenises", async () => {
    const tok = server.host.current.tokenizer;
    const proxy = createServer(async (req, res) => {
      const body = await new Promise<string>((ok) => {
        let b = "";
        req.on("data", (d) => (b += d)).on("end", () => ok(b));
      });
      const up = await fetch(`${server.url}${req.url}`, {
        method: req.method!,
        headers: { "content-type": "application/json" },
        ...(req.method === "POST" ? { body } : {}),
      });
      const json = (await up.json()) as { choices?: Record<string, unknown>[] };
      json.choices?.forEach((c) => delete c.token_ids);
      res.writeHead(up.status, { "content-type": "application/json" }).end(JSON.stringify(json));
    });
    await new Promise<void>((ok) => proxy.listen(0, "127.0.0.1", ok));
    try {
      const warnings: string[] = [];
      const port = (proxy.address() as { port: number }).port;
      const s = await RemoteSampler.connect(cfg({ baseUrl: `http://127.0.0.1:${port}/v1` }), tok, (w) =>
        warnings.push(w),
      );
      const prompts = PROMPTS.map((p) => ({ ids: promptIds(tok, p), text: p }));
      const got = await s.sample(prompts, opts);
      await s.sample(prompts, opts);
      expect(warnings).toEqual([
        expect.stringMatching(/the server returned no token_ids, so completions are re-tokenised/),
      ]);
      expect(got.every((g) => g.retokenized)).toBe(true);
      // Prompts still went as ids with the seed: every aligned row is exactly rlvr's own sample.
      const want = local();
      got.forEach((g, i) => g.logprobs && expect(g.tokens).toEqual(want[i]!.tokens));
    } finally {
      await new Promise((ok) => proxy.close(ok));
    }
  });

  it("a multi-turn task is refused, naming sampler.type", async () => {
    const tok = server.host.current.tokenizer;
    const s = await RemoteSampler.connect(cfg(), tok, () => {});
    const task = { name: "kg", environment: { name: "kg-tools", options: {} } };
    const run = sampleGroupsRemote(s, tok, task, [], {
      groupSize: 2,
      maxNewTokens: 4,
      temperature: 1,
      rng: new Rng(1),
      policyVersion: 0,
      idPrefix: "1",
    });
    await expect(run).rejects.toThrow(ConfigError);
    await expect(run).rejects.toThrow(/sampler\.type: task kg is multi-turn/);
  });
});

describe("sampleGroupsRemote: examples with their own stop strings", () => {
  it("one request per distinct stop list, seeded by split streams, rows back in example order", async () => {
    const tok = server.host.current.tokenizer;
    const { model } = server.host.current;
    const s = await RemoteSampler.connect(cfg({ pushWeights: false }), tok, () => {});
    const ex = (id: string, prompt: string, stop?: string[]) =>
      ({ id, prompt, gold: null, goldCompletion: "", ...(stop ? { stop } : {}) }) as Example;
    const examples = [ex("a", "12+3=", ["1"]), ex("b", "7+8="), ex("c", "4+4=", ["1"])];
    const rng = new Rng(5);
    const { groups } = await sampleGroupsRemote(s, tok, { name: "t" }, examples, {
      groupSize: 2,
      maxNewTokens: 8,
      temperature: 1,
      stop: ["}"],
      rng,
      policyVersion: 0,
      idPrefix: "1",
    });
    // what rlvr's own sampler gives each request: {a, c} with stop "1", then {b} with the task's "}"
    const local = (ps: string[], stop: string[], part: number) =>
      noGrad(() =>
        sample(
          model,
          tok,
          ps.flatMap((p) => [promptIds(tok, p), promptIds(tok, p)]),
          { maxNewTokens: 8, temperature: 1, stop, rng: new Rng(new Rng(5).split(`stop-${part}`).seed) },
        ),
      );
    const ac = local(["12+3=", "4+4="], ["1"], 0);
    const b = local(["7+8="], ["}"], 1);
    const want = [ac.slice(0, 2), b, ac.slice(2, 4)];
    groups.forEach((g, q) => {
      expect(g.exampleId).toBe(examples[q]!.id);
      expect(g.rollouts.map((r) => r.completionIds)).toEqual(want[q]!.map((w) => w.tokens));
    });
  });
});

describe("recipe rules", () => {
  const base = { model: { type: "new" }, task: { name: "addition" } };
  const openai = { type: "openai", baseUrl: "http://127.0.0.1:8000/v1", model: "m" };
  const bad = (recipe: object) => () => resolveConfig({ ...base, ...recipe });
  it("zod errors name the sampler's fields", () => {
    expect(bad({ sampler: { type: "openai", model: "m" } })).toThrow(/sampler\.baseUrl/);
    expect(bad({ sampler: { ...openai, baseUrl: "ftp://x" } })).toThrow(/sampler\.baseUrl/);
    expect(bad({ sampler: { ...openai, tokenIds: "sometimes" } })).toThrow(/sampler\.tokenIds/);
    expect(bad({ sampler: { ...openai, model: "" } })).toThrow(/sampler\.model/);
    expect(bad({ sampler: { ...openai, extra: 1 } })).toThrow(/extra/);
  });
  it("offPolicy: fields checked, and the cross-field rules of algorithms spec §2.2 and §5", () => {
    expect(bad({ algorithm: { offPolicy: { correction: "clip" } } })).toThrow(/algorithm\.offPolicy\.correction/);
    expect(bad({ algorithm: { offPolicy: { cap: 1 } } })).toThrow(/algorithm\.offPolicy\.cap/);
    expect(bad({ algorithm: { offPolicy: { maxStaleness: 2 } } })).toThrow(/algorithm\.offPolicy\.maxStaleness/);
    expect(bad({ algorithm: { offPolicy: { maxStaleness: 1 }, policy: { clip: { type: "ppo" } } } })).toThrow(
      /algorithm\.offPolicy\.maxStaleness: asynchronous generation needs a remote sampler/,
    );
    expect(bad({ sampler: openai, algorithm: { offPolicy: { oldLogprobs: "sampler" } } })).toThrow(
      /algorithm\.policy\.clip: clip "none" with offPolicy\.oldLogprobs "sampler"/,
    );
    expect(bad({ sampler: openai, algorithm: { offPolicy: { maxStaleness: 1 } } })).toThrow(/algorithm\.policy\.clip/);
    // Allowed: the remote default (recompute + w_IS) with clip none; the built-in sampler's own log-probs.
    expect(resolveConfig({ ...base, sampler: openai }).algorithm.offPolicy.oldLogprobs).toBe("auto");
    expect(resolveConfig({ ...base, algorithm: { offPolicy: { oldLogprobs: "sampler" } } })).toBeTruthy();
  });
});
