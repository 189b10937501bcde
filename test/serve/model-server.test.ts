/**
 * The model server through the official `openai` client: completions and chat, n > 1, seeds, log-probs, streaming,
 * token ids in and out, and batching across concurrent requests — each checked against rlvr's own sampler run on the
 * same rows with the same seed (docs/model-server.md "Seeds and batching").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type OpenAI from "openai";
import { promptIds } from "../../src/rollout/groups.js";
import { defaultChatText, type RunningModelServer } from "../../src/serve/model-server/index.js";
import { client, rlvrSample, serve, tinyCheckpoint, vllm } from "./model-server-helpers.js";

const MODEL = "tiny";
let server: RunningModelServer;
let api: OpenAI;

beforeAll(async () => {
  server = await serve(tinyCheckpoint(3), { modelName: MODEL });
  api = client(server);
});
afterAll(() => server?.close());

describe("model server: completions", () => {
  it("lists the served model", async () => {
    const list = await api.models.list();
    expect(list.data.map((m) => m.id)).toEqual([MODEL]);
    expect(list.data[0]).toMatchObject({ object: "model", owned_by: "rlvr", max_model_len: 48 });
  });

  it("greedy text equals rlvr's own greedy sample, with the sampled token ids returned", async () => {
    const res = await api.completions.create({
      model: MODEL,
      prompt: "1+1=",
      max_tokens: 12,
      temperature: 0,
      ...vllm({ return_token_ids: true }),
    });
    const [want] = rlvrSample(server, "1+1=", { seed: 0, temperature: 0, maxNewTokens: 12 });
    const choice = res.choices[0] as unknown as Record<string, unknown>;
    expect(res.choices[0]!.text).toBe(want!.text);
    expect(choice.token_ids).toEqual(want!.tokens);
    expect(choice.prompt_token_ids).toEqual(promptIds(server.host.current.tokenizer, "1+1="));
    expect(res.choices[0]!.finish_reason).toBe(want!.finishReason);
    expect(res.usage).toEqual({
      prompt_tokens: 5,
      completion_tokens: want!.tokens.length,
      total_tokens: 5 + want!.tokens.length,
    });
  });

  it("n > 1 with a seed gives rlvr's sample() rows for that seed; the same seed repeats, another differs", async () => {
    const ask = (seed: number) =>
      api.completions.create({ model: MODEL, prompt: "abc", max_tokens: 10, n: 3, seed, temperature: 1 });
    const [a, b, c] = await Promise.all([ask(7), ask(7), ask(8)]);
    const want = rlvrSample(server, "abc", { n: 3, seed: 7, temperature: 1, maxNewTokens: 10 });
    expect(a.choices.map((x) => x.text)).toEqual(want.map((w) => w.text));
    expect(a.choices.map((x) => x.index)).toEqual([0, 1, 2]);
    expect(b.choices.map((x) => x.text)).toEqual(a.choices.map((x) => x.text));
    expect(new Set(a.choices.map((x) => x.text)).size).toBeGreaterThan(1); // rows draw from different streams
    expect(c.choices.map((x) => x.text)).not.toEqual(a.choices.map((x) => x.text));
  });

  it("returns the sampler's log-probs of the sampled tokens, and top log-probs under the same distribution", async () => {
    const res = await api.completions.create({
      model: MODEL,
      prompt: "xyz",
      max_tokens: 8,
      seed: 11,
      temperature: 0.7,
      logprobs: 3,
      ...vllm({ return_tokens_as_token_ids: true, return_token_ids: true }),
    });
    const [want] = rlvrSample(server, "xyz", { seed: 11, temperature: 0.7, maxNewTokens: 8 });
    const lp = res.choices[0]!.logprobs!;
    expect(lp.tokens).toEqual(want!.tokens.map((id) => `token_id:${id}`));
    lp.token_logprobs!.forEach((v, j) => expect(v).toBeCloseTo(want!.logprobs[j]!, 10));
    lp.top_logprobs!.forEach((top, j) => {
      const values = Object.values(top);
      expect(values).toHaveLength(3);
      expect(values[0]).toBeGreaterThanOrEqual(values[1]!); // most likely first
      expect(values[0]).toBeGreaterThanOrEqual(lp.token_logprobs![j]! - 1e-12);
      const sum = values.reduce((s, v) => s + Math.exp(v), 0);
      expect(sum).toBeLessThanOrEqual(1 + 1e-9);
    });
  });

  it("takes a prompt as token ids (vLLM style) and gives what the same ids as text give", async () => {
    const ids = promptIds(server.host.current.tokenizer, "q: 2*3?");
    const byIds = await api.completions.create({ model: MODEL, prompt: ids, max_tokens: 6, seed: 5 });
    const byText = await api.completions.create({ model: MODEL, prompt: "q: 2*3?", max_tokens: 6, seed: 5 });
    expect(byIds.choices[0]!.text).toBe(byText.choices[0]!.text);
    const both = await api.completions.create({
      model: MODEL,
      prompt: [ids, ids.slice(0, 3)],
      max_tokens: 4,
      n: 2,
      seed: 1,
    });
    expect(both.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]); // prompt-major
  });

  it("top_k (vLLM extension) 1 is greedy; top_p narrows the draw to the likeliest tokens", async () => {
    const [greedy] = rlvrSample(server, "topk", { seed: 0, temperature: 0, maxNewTokens: 8 });
    const k1 = await api.completions.create({
      model: MODEL,
      prompt: "topk",
      max_tokens: 8,
      seed: 3,
      ...vllm({ top_k: 1 }),
    });
    expect(k1.choices[0]!.text).toBe(greedy!.text);
    const p = await api.completions.create({ model: MODEL, prompt: "topk", max_tokens: 8, seed: 3, top_p: 1e-6 });
    expect(p.choices[0]!.text).toBe(greedy!.text); // the nucleus keeps only the most likely token
  });

  it("cuts the text before a stop string and reports finish_reason stop", async () => {
    const [greedy] = rlvrSample(server, "hello", { seed: 0, temperature: 0, maxNewTokens: 16 });
    const stop = greedy!.text.slice(4, 6);
    const res = await api.completions.create({ model: MODEL, prompt: "hello", max_tokens: 16, temperature: 0, stop });
    expect(res.choices[0]!.text).toBe(greedy!.text.slice(0, greedy!.text.indexOf(stop)));
    expect(res.choices[0]!.finish_reason).toBe("stop");
  });

  it("streams the same text, log-probs and token ids as the whole response", async () => {
    const body = { model: MODEL, prompt: "stream me", max_tokens: 12, n: 2, seed: 21, logprobs: 0 };
    const whole = await api.completions.create({ ...body, stop: ["zz", "q"] });
    const stream = await api.completions.create({
      ...body,
      stop: ["zz", "q"],
      stream: true,
      ...vllm({ return_token_ids: true }),
    });
    const text = ["", ""];
    const ids: number[][] = [[], []];
    const lps: number[][] = [[], []];
    const finish: (string | null)[] = [null, null];
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        text[c.index] += c.text;
        ids[c.index]!.push(...((c as unknown as { token_ids?: number[] }).token_ids ?? []));
        lps[c.index]!.push(...(c.logprobs?.token_logprobs ?? []));
        if (c.finish_reason) finish[c.index] = c.finish_reason;
      }
    }
    expect(text).toEqual(whole.choices.map((c) => c.text));
    expect(lps).toEqual(whole.choices.map((c) => c.logprobs!.token_logprobs));
    expect(ids.map((x) => x.length)).toEqual(lps.map((x) => x.length));
    expect(finish).toEqual(whole.choices.map((c) => c.finish_reason));
  });

  it("batches concurrent requests, and each one's output is what it gets alone", async () => {
    const prompts = ["a", "bb bb", "ccc", "d d d d d"];
    const ask = (p: string, i: number) =>
      api.completions.create({ model: MODEL, prompt: p, max_tokens: 5 + i, seed: 100 + i, temperature: 1 });
    const before = server.scheduler.batchSizes.length;
    const together = await Promise.all(prompts.map(ask));
    expect(Math.max(...server.scheduler.batchSizes.slice(before))).toBeGreaterThan(1);
    for (let i = 0; i < prompts.length; i++) {
      const [alone] = rlvrSample(server, prompts[i]!, { seed: 100 + i, temperature: 1, maxNewTokens: 5 + i });
      expect(together[i]!.choices[0]!.text).toBe(alone!.text);
    }
  });
});

describe("model server: chat", () => {
  it("renders the default template for a checkpoint without one, and answers like a completion of that prompt", async () => {
    const messages = [{ role: "user" as const, content: "hi" }];
    const res = await api.chat.completions.create({
      model: MODEL,
      messages,
      max_tokens: 8,
      seed: 4,
      logprobs: true,
      top_logprobs: 2,
      ...vllm({ return_token_ids: true }),
    });
    const tok = server.host.current.tokenizer;
    const prompt = [tok.bosId!, ...tok.encode(defaultChatText(messages))];
    expect((res as unknown as { prompt_token_ids: number[] }).prompt_token_ids).toEqual(prompt);
    const [want] = rlvrSample(server, prompt, { seed: 4, temperature: 1, maxNewTokens: 8 });
    expect(res.choices[0]!.message).toMatchObject({ role: "assistant", content: want!.text });
    const content = res.choices[0]!.logprobs!.content!;
    content.forEach((c, j) => {
      expect(c.logprob).toBeCloseTo(want!.logprobs[j]!, 10);
      expect(c.top_logprobs).toHaveLength(2);
    });
  });

  it("renders tokenizer_config.json's chat template with @huggingface/jinja", async () => {
    const template =
      "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}[assistant] {% endif %}";
    const other = await serve(tinyCheckpoint(3, template), { modelName: "t" });
    try {
      const res = await client(other).chat.completions.create({
        model: "t",
        messages: [
          { role: "system", content: "s" },
          { role: "user", content: "2+2?" },
        ],
        max_tokens: 4,
        ...vllm({ return_token_ids: true }),
      });
      const tok = other.host.current.tokenizer;
      // the char tokenizer spells "<bos>" out as characters: the template's text is encoded as written
      const text = "<bos>[system] s\n[user] 2+2?\n[assistant] ";
      expect((res as unknown as { prompt_token_ids: number[] }).prompt_token_ids).toEqual(tok.encode(text));
      expect(other.host.current.chat.source).toBe("tokenizer_config.json");
    } finally {
      await other.close();
    }
  });

  it("streams chat deltas with a usage chunk at the end", async () => {
    const body = { model: MODEL, messages: [{ role: "user" as const, content: "count" }], max_tokens: 6, seed: 9 };
    const whole = await api.chat.completions.create(body);
    const stream = await api.chat.completions.create({
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let role: string | undefined;
    let usage: unknown = null;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        text += c.delta.content ?? "";
        role ??= c.delta.role;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(role).toBe("assistant");
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(usage).toEqual(whole.usage);
  });
});
