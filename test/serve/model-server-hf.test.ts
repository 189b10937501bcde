/**
 * The model server on a Hugging Face Qwen2 checkpoint (the parity fixture: RoPE, GQA, a BPE tokenizer.json) with a
 * ChatML template in tokenizer_config.json: the template's special tokens become their ids, and the answers equal
 * rlvr's own sampler on the same ids with the same seed.
 */
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type OpenAI from "openai";
import type { RunningModelServer } from "../../src/serve/model-server/index.js";
import { client, rlvrSample, serve, vllm } from "./model-server-helpers.js";

const CHATML =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}" +
  "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

let server: RunningModelServer;
let api: OpenAI;

beforeAll(async () => {
  const dir = join(mkdtempSync(join(tmpdir(), "rlvr-model-server-hf-")), "qwen2");
  cpSync(join(import.meta.dirname, "..", "fixtures", "parity", "qwen2"), dir, { recursive: true });
  writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ chat_template: CHATML, eos_token: "<|im_end|>" }));
  server = await serve(dir);
  api = client(server);
});
afterAll(() => server?.close());

describe("model server: Hugging Face Qwen2 checkpoint", () => {
  it("renders the ChatML template to special-token ids and answers as rlvr's sampler does", async () => {
    const res = await api.chat.completions.create({
      model: "qwen2",
      messages: [{ role: "user", content: "Hello, world!" }],
      max_tokens: 8,
      seed: 2,
      logprobs: true,
      ...vllm({ return_token_ids: true }),
    });
    const prompt = (res as unknown as { prompt_token_ids: number[] }).prompt_token_ids;
    const tok = server.host.current.tokenizer;
    expect(prompt[0]).toBe(298); // <|im_start|>
    expect(prompt).toContain(299); // <|im_end|>
    expect(prompt).toEqual(tok.encode("<|im_start|>user\nHello, world!<|im_end|>\n<|im_start|>assistant\n"));
    const [want] = rlvrSample(server, prompt, { seed: 2, temperature: 1, maxNewTokens: 8 });
    expect((res.choices[0] as unknown as { token_ids: number[] }).token_ids).toEqual(want!.tokens);
    expect(res.choices[0]!.message.content).toBe(want!.text);
    res.choices[0]!.logprobs!.content!.forEach((c, j) => expect(c.logprob).toBeCloseTo(want!.logprobs[j]!, 10));
  });

  it("greedy completion of a text prompt equals rlvr's greedy sample", async () => {
    const res = await api.completions.create({ model: "qwen2", prompt: "Hello", max_tokens: 10, temperature: 0 });
    const [want] = rlvrSample(server, "Hello", { seed: 0, temperature: 0, maxNewTokens: 10 });
    expect(res.choices[0]!.text).toBe(want!.text);
  });
});
