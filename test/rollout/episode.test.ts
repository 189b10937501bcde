/**
 * The episode loop: single turn is `sample()` exactly; rows at different turns share one batch, and generation
 * after inserted tokens continues from the KV cache with the log-probs of a full recompute; budgets (turns, tokens
 * per turn, total tokens) are enforced and recorded; environment errors, throws and timeouts never crash or hang.
 */
import { describe, expect, it } from "vitest";
import { tokenLogprobsFor } from "../sampling/helpers.js";
import { Rng } from "../../src/util/index.js";
import { createModel } from "../../src/models/registry.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { sample } from "../../src/sampling/sample.js";
import { runEpisodes, type EpisodeResult } from "../../src/rollout/episode.js";
import type { EnvEpisode, EnvReply, Environment } from "../../src/envs/types.js";

const tok = new CharTokenizer();
const llama = createModel("micro-char", new Rng(1)).model.eval();
const gpt = createModel("micro-char", new Rng(2), {
  arch: "gpt2",
  nKvHeads: 4,
  dFf: 128,
  tieEmbeddings: false,
}).model.eval();

/** A scripted tool: answers turn k with `reply(k)`; `max` turns then ends. */
function scripted(over: Partial<Environment> & { reply?: (turn: number, text: string) => EnvReply } = {}): Environment {
  const { reply, ...rest } = over;
  return {
    name: "scripted",
    stop: ["e", "a"],
    budgets: { maxTurns: 4, maxTokensPerTurn: 6 },
    timeoutMs: 1000,
    onError: "reply",
    errorReward: -1,
    loopReward: -0.5,
    start: (): EnvEpisode => ({
      step: (text, info) =>
        reply?.(info.turn, text) ??
        (info.turn < 3 ? { kind: "observation", text: `[r${info.turn}]` } : { kind: "end" }),
    }),
    ...rest,
  };
}

const prompts = [tok.encode("12+3="), tok.encode("7+8="), tok.encode("1=")];
const run = (
  env: Environment | null,
  o: { model?: typeof llama; max?: number; seed?: number; rows?: number[][] } = {},
) =>
  runEpisodes(
    o.model ?? llama,
    tok,
    o.rows ?? prompts,
    env,
    (o.rows ?? prompts).map(() => env?.start({} as never) ?? null),
    {
      maxNewTokens: o.max ?? 40,
      temperature: 1,
      rng: new Rng(o.seed ?? 3),
    },
  );

/** Segments tile the completion; inserted tokens have mask 0 and log-prob 0, model tokens mask 1. */
function checkLayout(r: EpisodeResult): void {
  let at = 0;
  for (const s of r.segments) {
    expect(s.start).toBe(at);
    expect(s.end).toBeGreaterThan(s.start);
    for (let j = s.start; j < s.end; j++) {
      expect(r.lossMask[j]).toBe(s.kind === "model" ? 1 : 0);
      if (s.kind === "inserted") expect(r.samplerLogprobs[j]).toBe(0);
    }
    at = s.end;
  }
  expect(at).toBe(r.completionIds.length);
  expect(r.samplerLogprobs.length).toBe(r.completionIds.length);
}

describe.each([
  ["llama", llama],
  ["gpt2", gpt],
] as const)("episode loop (%s)", (_name, model) => {
  it("single turn (no environment) is sample() exactly: tokens, log-probs, finish", async () => {
    const want = sample(model, tok, prompts, { maxNewTokens: 12, temperature: 1, stop: ["+"], rng: new Rng(9) });
    const got = await runEpisodes(model, tok, prompts, null, [null, null, null], {
      maxNewTokens: 12,
      temperature: 1,
      stop: ["+"],
      rng: new Rng(9),
    });
    got.forEach((g, b) => {
      expect(g.completionIds).toEqual(want[b]!.tokens);
      expect(g.samplerLogprobs).toEqual(want[b]!.logprobs);
      expect(g.finishReason).toBe(want[b]!.finishReason);
      expect(g.segments).toEqual([{ kind: "model", start: 0, end: want[b]!.tokens.length, text: want[b]!.text }]);
    });
  });

  it("rows at different turns share a batch; after inserted tokens the cached log-probs equal a full recompute", async () => {
    const out = await run(scripted(), { model });
    const boundaries = out.map((r) => r.segments.map((s) => s.start).join(","));
    expect(new Set(boundaries).size).toBeGreaterThan(1); // rows switched between turns and tool output at different steps
    for (const [b, r] of out.entries()) {
      checkLayout(r);
      expect(r.segments.filter((s) => s.kind === "inserted").length).toBeGreaterThan(0);
      const full = tokenLogprobsFor(model, prompts[b]!, r.completionIds, 1);
      r.lossMask.forEach((m, j) => {
        if (m) expect(Math.abs(full[j]! - r.samplerLogprobs[j]!), `row ${b} token ${j}`).toBeLessThan(1e-4);
      });
    }
  });
});

describe("episode loop: per-row stop strings (an example's own, Example.stop)", () => {
  it("a row stops at its own stop strings, the others at the batch's; per-row streams keep every other token", async () => {
    const free = await run(null); // no stop strings: each row runs to eos or the budget
    const cut = (text: string, s: string) => text.slice(0, text.indexOf(s) + s.length);
    const own = free[0]!.text[2]!; // row 0's third character: its own stop string
    const shared = free[2]!.text[1]!; // row 2's second: the batch's, which row 2's own empty list must override
    const got = await runEpisodes(llama, tok, prompts, null, [null, null, null], {
      maxNewTokens: 40,
      temperature: 1,
      stop: [shared],
      rowStop: [[own], undefined, []],
      rng: new Rng(3),
    });
    expect(got[0]!.text).toBe(cut(free[0]!.text, own));
    expect(got[0]!.finishReason).toBe("stop");
    expect(got[1]!.text).toBe(free[1]!.text.includes(shared) ? cut(free[1]!.text, shared) : free[1]!.text);
    expect(got[2]!.text).toBe(free[2]!.text);
    expect(free[2]!.text.length).toBeGreaterThan(2); // the batch's list would have cut it after two characters
    expect(got[2]!.completionIds).toEqual(free[2]!.completionIds);
  });
});

describe("episode loop: inserted text and budgets", () => {
  it("inserts the environment's text as its exact token ids; a one-row batch inserts them in one multi-token step", async () => {
    const [r] = await run(scripted(), { rows: [prompts[0]!] });
    const inserted = r!.segments.filter((s) => s.kind === "inserted");
    expect(inserted.map((s) => s.text)).toEqual(["[r1]", "[r2]"]);
    for (const s of inserted) expect(r!.completionIds.slice(s.start, s.end)).toEqual(tok.encode(s.text));
    const full = tokenLogprobsFor(llama, prompts[0]!, r!.completionIds, 1);
    r!.lossMask.forEach((m, j) => m && expect(Math.abs(full[j]! - r!.samplerLogprobs[j]!)).toBeLessThan(1e-4));
    expect(r!.episode).toMatchObject({ env: "scripted", turns: 3, errors: [] });
  });

  it("max tokens per turn: a turn ends after maxTokensPerTurn tokens, recorded as turnTokens", async () => {
    const env = scripted({ stop: [], budgets: { maxTurns: 4, maxTokensPerTurn: 3 } });
    for (const r of await run(env)) {
      for (const s of r.segments.filter((x) => x.kind === "model")) expect(s.end - s.start).toBeLessThanOrEqual(3);
      expect(r.episode.truncated).toBe("turnTokens");
    }
  });

  it("a call parser (endsTurn) ends a turn where it finds a complete call, as end 'call', not a truncation", async () => {
    const turns: { text: string; end: string }[] = [];
    // a "call" is complete at 3 characters (pad and bos decode to "", so a turn may hold more than 3 tokens)
    const parsed = scripted({
      stop: [],
      budgets: { maxTurns: 4, maxTokensPerTurn: 8 },
      endsTurn: (t) => t.length >= 3,
    });
    parsed.start = () => ({
      step: (text, info) => {
        turns.push({ text, end: info.end });
        return info.turn < 3 ? { kind: "observation", text: `[r${info.turn}]` } : { kind: "end" };
      },
    });
    for (const r of await run(parsed, { max: 60 })) {
      checkLayout(r);
      expect(r.episode.truncated).toBeUndefined();
      for (const seg of r.segments.filter((x) => x.kind === "model")) {
        expect(seg.text.length).toBeLessThanOrEqual(3);
        // the parser saw every prefix: a call ends on the token that completes it, never later
        const ids = r.completionIds.slice(seg.start, seg.end);
        if (seg.text.length === 3) expect(tok.decode(ids.slice(0, -1)).length).toBe(2);
      }
    }
    expect(turns.filter((t) => t.end === "call").length).toBeGreaterThan(0);
    for (const t of turns) expect(t.end === "call").toBe(t.text.length === 3);
  });

  it("stop strings are checked before the parser; a throwing parser counts as no call", async () => {
    const ends: { text: string; end: string }[] = [];
    const always = scripted({ endsTurn: () => true }); // stop ["e", "a"]: every turn is one token
    always.start = () => ({
      step: (text, info) => {
        ends.push({ text, end: info.end });
        return info.turn < 3 ? { kind: "observation", text: "." } : { kind: "end" };
      },
    });
    await run(always, { seed: 5 });
    for (const { text, end } of ends)
      // eos, pad and bos decode to ""
      if (text) expect(end).toBe(text === "e" || text === "a" ? "stop" : "call");
    expect(ends.filter((e) => e.end === "call").length).toBeGreaterThan(0);
    expect(ends.every((e) => e.text.length <= 1)).toBe(true);
    const throwing = await run(
      scripted({
        endsTurn: () => {
          throw new Error("bad parser");
        },
      }),
    );
    const plain = await run(scripted());
    throwing.forEach((r, b) => expect(r.completionIds).toEqual(plain[b]!.completionIds));
  });

  it("max total tokens: never exceeded, recorded as totalTokens with finish length", async () => {
    const env = scripted({
      stop: [],
      budgets: { maxTurns: 10, maxTokensPerTurn: 8 },
      reply: () => ({ kind: "observation", text: "[obs]" }),
    });
    for (const r of await run(env, { max: 20 })) {
      expect(r.completionIds.length).toBeLessThanOrEqual(20);
      expect(r.finishReason).toBe("length");
      expect(r.episode.truncated).toBe("totalTokens");
    }
  });

  it("an endless loop of calls stops at maxTurns with the environment's loop reward and a counted error", async () => {
    const env = scripted({
      budgets: { maxTurns: 3, maxTokensPerTurn: 4 },
      reply: () => ({ kind: "observation", text: "." }),
    });
    for (const r of await run(env, { max: 60 })) {
      expect(r.episode.turns).toBe(3);
      expect(r.episode.truncated).toBe("turns");
      expect(r.episode.envReward).toBe(-0.5);
      expect(r.episode.errors).toHaveLength(1);
    }
  });
});

describe("episode loop: environment errors never crash or hang", () => {
  it("a throwing call with onError reply: the error goes back to the model as text and is counted", async () => {
    const env = scripted({
      reply: (turn) => {
        if (turn === 1) throw new Error("tool exploded");
        return turn < 3 ? { kind: "observation", text: "ok" } : { kind: "end" };
      },
    });
    for (const r of await run(env)) {
      expect(r.episode.errors).toEqual(["scripted: tool exploded"]);
      expect(r.segments.find((s) => s.kind === "inserted")?.text).toBe("\nerror: tool exploded\n");
      expect(r.episode.envReward).toBeUndefined();
    }
  });

  it("a throwing call with onError end: the episode ends with the error reward, finish error", async () => {
    const env = scripted({
      onError: "end",
      reply: () => {
        throw new Error("boom");
      },
    });
    for (const r of await run(env)) {
      expect(r.finishReason).toBe("error");
      expect(r.episode.envReward).toBe(-1);
      expect(r.episode.turns).toBe(1);
    }
  });

  it("a call that never answers times out (counted) instead of hanging", async () => {
    const env = scripted({ onError: "end", timeoutMs: 30, reply: () => new Promise<EnvReply>(() => {}) as never });
    const t0 = Date.now();
    const out = await run(env);
    expect(Date.now() - t0).toBeLessThan(5000);
    for (const r of out) expect(r.episode.errors[0]).toMatch(/timeout/);
  });

  it("bad input answered by the environment (an error reply) is counted and the episode goes on", async () => {
    const env = scripted({
      reply: (turn) =>
        turn === 1 ? { kind: "observation", text: "no such tool", error: "unknown tool" } : { kind: "end" },
    });
    for (const r of await run(env)) {
      expect(r.episode.errors).toEqual(["unknown tool"]);
      expect(r.episode.turns).toBe(2);
    }
  });
});
