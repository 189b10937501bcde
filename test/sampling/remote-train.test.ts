/**
 * Training with the remote sampler against `rlvr serve` on loopback (issue 18): the same seeded run with sampling over
 * HTTP gives the same rewards as the built-in sampler, and the same losses when lp_old is the sampler's; with lp_old
 * recomputed (the remote default) the losses differ only by the measured sampler/trainer mismatch, which w_IS
 * corrects. Also: the weights pushed after every step are the trainer's, one step ahead generation lags by exactly
 * one version, and re-tokenised text is counted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadModel } from "../../src/models/checkpoint.js";
import type { RunningModelServer } from "../../src/serve/model-server/index.js";
import { OpenAiSamplerSchema } from "../../src/sampling/remote/index.js";
import { RemoteGeneration } from "../../src/trainer/remote-generation.js";
import { getTask } from "../../src/tasks/index.js";
import { Rng } from "../../src/util/index.js";
import { runWith, serve, tinyPolicy } from "./remote-helpers.js";

let policy: string;
let server: RunningModelServer;
let openai: object;
beforeAll(async () => {
  policy = tinyPolicy();
  server = await serve(policy);
  openai = { type: "openai", baseUrl: `${server.url}/v1`, model: "policy" };
});
afterAll(() => server?.close());

const col = (ms: Record<string, number>[], k: string) => ms.map((m) => m[k]);

describe("remote sampler: a seeded run over HTTP", () => {
  it("oldLogprobs sampler: the same rewards, losses and gradient norms as the built-in sampler, bit for bit", async () => {
    const builtin = (await runWith(policy, { type: "builtin" })).metrics;
    const remote = (
      await runWith(policy, openai, { offPolicy: { oldLogprobs: "sampler" }, policy: { clip: { type: "ppo" } } })
    ).metrics;
    const builtinPpo = (await runWith(policy, { type: "builtin" }, { policy: { clip: { type: "ppo" } } })).metrics;
    expect(col(remote, "reward/mean")).toEqual(col(builtin, "reward/mean"));
    expect(new Set(col(builtin, "reward/mean")).size).toBeGreaterThan(1); // the weights moved the samples
    expect(col(remote, "loss/total")).toEqual(col(builtinPpo, "loss/total"));
    expect(col(remote, "grad/norm")).toEqual(col(builtinPpo, "grad/norm"));
    expect(col(remote, "remote/weightsVersion")).toEqual([1, 2, 3]);
    expect(col(remote, "mismatch/logpDiffMax").every((d) => d! < 1e-5)).toBe(true);
  });

  it("recompute (the default): same rewards; losses differ only by the measured mismatch; w_IS ≈ 1", async () => {
    const builtin = (await runWith(policy, { type: "builtin" })).metrics;
    const remote = (await runWith(policy, openai)).metrics;
    expect(col(remote, "reward/mean")).toEqual(col(builtin, "reward/mean"));
    const diffs = col(remote, "mismatch/logpDiffMax") as number[];
    expect(diffs.every((d) => Number.isFinite(d) && d < 1e-5)).toBe(true); // KV-cache decode vs full forward, float32
    for (const m of remote) {
      expect(Math.abs(m["mismatch/isMean"]! - 1)).toBeLessThan(1e-5);
      expect(m["mismatch/isZeroedFrac"]).toBe(0);
    }
    // Loss and gradient move by at most a few ulps of the mismatch: |Δ loss| ≤ |A|max · max|δ| (w_IS = e^δ ≈ 1 + δ).
    remote.forEach((m, i) => {
      expect(Math.abs(m["loss/total"]! - builtin[i]!["loss/total"]!)).toBeLessThan(5 * diffs[i]! + 1e-6);
      expect(m["grad/norm"]).toBeCloseTo(builtin[i]!["grad/norm"]!, 4);
    });
    expect(remote.every((m) => m["time/oldLogprobs"]! > 0 && m["time/weightSync"]! > 0)).toBe(true);
  });

  it("pushes the trainer's weights after every step: the server ends with the run's final weights", async () => {
    const { runDir } = await runWith(policy, openai, {}, { steps: 2 });
    const pushed = server.host.current.model.namedParameters();
    const final = loadModel(join(runDir, "checkpoints", "step-2")).model.namedParameters();
    expect(pushed.map(([n]) => n)).toEqual(final.map(([n]) => n));
    pushed.forEach(([, p], i) => expect(Array.from(p.data)).toEqual(Array.from(final[i]![1].data)));
  });

  it("a run stopped after step 1 and resumed pushes the resumed weights and ends as the uninterrupted run", async () => {
    const outDir = mkdtempSync(join(tmpdir(), "rlvr-remote-resume-"));
    await runWith(policy, openai, {}, { outDir, stopAfter: 1 });
    const whole = (await runWith(policy, openai)).metrics; // leaves the server on other weights
    const resumed = (await runWith(policy, openai, {}, { outDir })).metrics;
    expect(col(resumed, "reward/mean")).toEqual(col(whole, "reward/mean"));
    expect(col(resumed, "loss/total")).toEqual(col(whole, "loss/total"));
  });

  it("maxStaleness 1: the next batch decodes during the update, one version behind, nothing dropped", async () => {
    const sync = (await runWith(policy, openai, { policy: { clip: { type: "ppo" } } })).metrics;
    const ahead = (await runWith(policy, openai, { policy: { clip: { type: "ppo" } }, offPolicy: { maxStaleness: 1 } }))
      .metrics;
    expect(col(ahead, "mismatch/staleDroppedFrac")).toEqual([0, 0, 0]);
    expect(ahead[0]!["reward/mean"]).toBe(sync[0]!["reward/mean"]); // step 1: both sample the start weights
    // Step 2 was sampled by the start weights (version 0) while step 1 trained: lp_old, recomputed with the step-1
    // weights, now differs from lp_inf by a policy step, not by rounding.
    expect(ahead[1]!["mismatch/logpDiffMax"]).toBeGreaterThan(1e-4);
    expect(sync[1]!["mismatch/logpDiffMax"]).toBeLessThan(1e-5);
  });

  it("correction, cap and capMin/capMax each move the numbers of a stale run (every knob has a reader)", async () => {
    const ppo = { clip: { type: "ppo" } };
    const variants = [
      { correction: "none" },
      { correction: "tokenTruncate", cap: 1.0001 },
      { correction: "tokenTruncate", cap: 1.5 },
      { correction: "tokenMask", capMin: 0.9999, capMax: 1.0001 },
      { correction: "sequenceTruncate", cap: 1.0001 },
      { oldLogprobs: "sampler" },
    ];
    const runs: Record<string, number>[][] = [];
    for (const o of variants)
      // one after another: they share the server's weights
      runs.push((await runWith(policy, openai, { policy: ppo, offPolicy: { maxStaleness: 1, ...o } })).metrics);
    const step2 = runs.map((r) => r[1]!); // step 2: sampled by version 0, trained from version 1
    expect(step2[0]!["mismatch/isMean"]).toBe(1); // none: w_IS ≡ 1, the mismatch still measured
    expect(step2[0]!["mismatch/logpDiffMax"]).toBeGreaterThan(1e-2);
    expect(step2[1]!["mismatch/isMax"]).toBeLessThanOrEqual(1.0001);
    expect(step2[2]!["mismatch/isMax"]).toBeGreaterThan(1.0001);
    expect(step2[3]!["mismatch/isZeroedFrac"]).toBeGreaterThan(0);
    expect(step2[5]!["mismatch/isMean"]).toBeUndefined(); // sampler: no w_IS; the mismatch sits in the ratio
    // Step 3's losses (step 2's groups all tie): each knob moves them. Where no cap binds (cap 1.5 > every e^δ),
    // ρ·w_IS with recomputed lp_old is the sampler mode's ratio, so those two agree.
    const losses = runs.map((r) => r[2]!["loss/total"]!);
    expect(new Set(losses.slice(0, 5)).size).toBe(5);
    expect(runs[2]![2]!["mismatch/isMax"]).toBeLessThan(1.5);
    expect(losses[5]).toBeCloseTo(losses[2]!, 12);
  });

  it("tokenIds never: text is re-tokenised, with one warning and the counts logged", async () => {
    const warnings: string[] = [];
    const { metrics } = await runWith(
      policy,
      { ...openai, tokenIds: "never" },
      {},
      { warn: (w) => warnings.push(w), steps: 2 },
    );
    expect(warnings.filter((w) => w.includes("re-tokenised"))).toHaveLength(1);
    expect(col(metrics, "remote/retokenizedFrac")).toEqual([1, 1]);
    // A random tiny model samples <pad>/<bos> ids and the task's stop string, which the text drops: those rows
    // misalign (remote-sampler.test.ts checks which), are counted, and train on recomputed log-probs with w_IS = 1.
    const mismatch = col(metrics, "remote/tokenMismatchFrac") as number[];
    expect(mismatch.every((f) => f > 0 && f < 1)).toBe(true);
    expect(metrics.every((m) => Number.isFinite(m["loss/total"]) && m["mismatch/isMean"]! > 0.99)).toBe(true);
  });

  it("drops, and counts, groups that lag the trainer by more than maxStaleness versions", async () => {
    const tok = server.host.current.tokenizer;
    const task = getTask("addition", { maxDigits: 1 });
    const examples = task.generate("train", 3, 0);
    const gen = await RemoteGeneration.connect(
      OpenAiSamplerSchema.parse({ ...openai, pushWeights: false }),
      tok,
      "/tmp",
      0,
      () => {},
    );
    const opts = { groupSize: 2, maxNewTokens: 4, temperature: 1, rng: new Rng(5), idPrefix: "3" };
    // Sampled by version 1, read at step 3 (trainer version 2) with maxStaleness 0: one version too old.
    const stale = await gen.groups(task, examples, { ...opts, policyVersion: 1 }, 3);
    expect(stale).toEqual([]);
    expect(gen.takeMetrics()["mismatch/staleDroppedFrac"]).toBe(1);
    const fresh = await gen.groups(task, examples, { ...opts, policyVersion: 2 }, 3);
    expect(fresh.map((g) => g.rollouts.length)).toEqual([2, 2, 2]);
    expect(gen.takeMetrics()["mismatch/staleDroppedFrac"]).toBe(0);
  });
});
