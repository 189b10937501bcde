/**
 * The model server with a vision-language checkpoint: a chat request whose message carries an `image_url` part (a
 * base64 PNG data URL) decodes exactly as rlvr's own sampler does on the same rendered prompt and image, the image
 * changes the answer's log-probs (it is really seen), and every bad image input is a 400 naming its field.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { noGrad } from "../../src/engine/index.js";
import { saveModel } from "../../src/models/checkpoint.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { IMAGE_MARKER, VisionLanguageModel, newVisionLM } from "../../src/models/vision-lm.js";
import { sample } from "../../src/sampling/sample.js";
import type { RunningModelServer } from "../../src/serve/model-server/index.js";
import { RgbImage, encodePng } from "../../src/util/image.js";
import { Rng } from "../../src/util/index.js";
import { client, serve, tinyCheckpoint, vllm } from "./model-server-helpers.js";

const dirs: string[] = [];
let server: RunningModelServer;

function visionCheckpoint(): string {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-serve-vision-"));
  dirs.push(dir);
  const { model, tokenizer } = newVisionLM(
    { arch: "gpt2", dModel: 32, nLayers: 1, nHeads: 2, nKvHeads: 2, dFf: 64, maxSeqLen: 96 },
    { imageSize: 8, patchSize: 2, mergeSize: 2, dModel: 16, nLayers: 1, nHeads: 2, dFf: 32 },
    new CharTokenizer(),
    new Rng(3),
  );
  saveModel(dir, model, tokenizer);
  return dir;
}

/** An 8x8 image: a bright square on a dark ground at (x, y), or its inverse. */
function square(x: number, y: number, invert = false): RgbImage {
  const img = new RgbImage(8, 8);
  for (let i = 0; i < 64; i++) {
    const inside = i % 8 >= x && i % 8 < x + 3 && Math.floor(i / 8) >= y && Math.floor(i / 8) < y + 3;
    img.data.fill(inside !== invert ? 0.9 : 0.1, i * 3, i * 3 + 3);
  }
  return img;
}

const dataUrl = (img: RgbImage) => `data:image/png;base64,${encodePng(img).toString("base64")}`;

/** One user message: text, then the image part. */
const withImage = (text: string, url: string) => [
  {
    role: "user" as const,
    content: [
      { type: "text" as const, text },
      { type: "image_url" as const, image_url: { url } },
    ],
  },
];

beforeAll(async () => {
  server = await serve(visionCheckpoint());
});
afterAll(async () => {
  await server.close();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

describe("model server: a vision-language checkpoint", () => {
  it("answers a chat message with an image exactly as rlvr's sampler does on the same prompt and image", async () => {
    const { model, tokenizer, chat } = server.host.current;
    expect(model).toBeInstanceOf(VisionLanguageModel);
    const img = square(1, 2);
    const res = await client(server).chat.completions.create({
      model: server.host.name,
      messages: withImage("where is the square? ", dataUrl(img)),
      temperature: 0.8,
      seed: 11,
      max_tokens: 12,
      logprobs: true,
      ...vllm({ return_token_ids: true }),
    });
    const choice = res.choices[0] as unknown as { token_ids: number[]; logprobs: { content: { logprob: number }[] } };
    const ids = chat.render([{ role: "user", content: `where is the square? ${IMAGE_MARKER}` }]).ids;
    expect((res as unknown as { prompt_token_ids: number[] }).prompt_token_ids).toEqual(ids);
    const want = noGrad(() =>
      sample(model, tokenizer, [ids], { maxNewTokens: 12, temperature: 0.8, rng: new Rng(11), images: [[img]] }),
    )[0]!;
    expect(choice.token_ids).toEqual(want.tokens);
    const got = choice.logprobs.content.map((c) => c.logprob);
    got.forEach((lp, i) => expect(lp).toBeCloseTo(want.logprobs[i]!, 4));
  });

  it("the image is seen: another image changes the first token's log-probs", async () => {
    const first = async (img: RgbImage) => {
      const res = await client(server).chat.completions.create({
        model: server.host.name,
        messages: withImage("what? ", dataUrl(img)),
        temperature: 0,
        max_tokens: 1,
        logprobs: true,
        top_logprobs: 5,
      });
      return res.choices[0]!.logprobs!.content![0]!.top_logprobs.map((t) => t.logprob);
    };
    const a = await first(square(0, 0));
    expect(await first(square(0, 0))).toEqual(a); // deterministic
    const b = await first(square(4, 4, true));
    expect(Math.max(...a.map((x, i) => Math.abs(x - b[i]!)))).toBeGreaterThan(1e-4);
  });

  it("bad image inputs are 400s naming the field", async () => {
    const post = (messages: unknown) =>
      fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: server.host.name, messages, max_tokens: 2 }),
      }).then(async (r) => ({
        status: r.status,
        error: ((await r.json()) as { error: { param: string; code: string } }).error,
      }));
    const remote = await post(withImage("x", "https://example.com/cat.png"));
    expect(remote.status).toBe(400);
    expect(remote.error).toMatchObject({ param: "messages.0.content.1.image_url.url", code: "invalid_image_url" });
    const notPng = await post(withImage("x", `data:image/png;base64,${Buffer.from("hello").toString("base64")}`));
    expect(notPng.error).toMatchObject({ param: "messages.0.content.1.image_url.url", code: "invalid_image" });
    const garbled = await post(withImage("x", "data:image/png;base64,@@@"));
    expect(garbled.error.code).toBe("invalid_image");
    // a placeholder typed into the text has no image behind it
    const typed = await post([{ role: "user", content: `look ${IMAGE_MARKER}` }]);
    expect(typed).toMatchObject({ status: 400, error: { param: "messages", code: "image_count_mismatch" } });
    const unknownPart = await post([{ role: "user", content: [{ type: "input_audio", input_audio: {} }] }]);
    expect(unknownPart.status).toBe(400);
    // the server still answers after all of them
    const ok = await post(withImage("x", dataUrl(square(2, 2))));
    expect(ok.status).toBe(200);
  });

  it("a text-only model refuses images with a 400", async () => {
    const text = await serve(tinyCheckpoint(4));
    try {
      const r = await fetch(`${text.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: text.host.name, messages: withImage("x", dataUrl(square(0, 0))), max_tokens: 2 }),
      });
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe("images_not_supported");
    } finally {
      await text.close();
    }
  });
});
