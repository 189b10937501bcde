/**
 * The trainer's side of a remote sampler (`sampler: { type: "openai" }`, docs/remote-sampler.md): it generates each
 * step's groups on the server, pushes the trainer's weights to it after every optimizer step, and, with
 * `algorithm.offPolicy.maxStaleness: 1`, generates the next step's batch while this step trains.
 *
 * Versions: the server holds weights version v after the push of step v (the start weights are pushed as version
 * `state.step` before the first step, so a resumed run starts in sync). A batch records the version the server held
 * when it was asked for; a push waits for the batch in flight, so every batch is decoded by one known version (rlvr
 * serve would otherwise start a queued batch with the new weights). Rollouts lagging the trainer by more than
 * `maxStaleness` versions are dropped (`mismatch/staleDroppedFrac`). With `pushWeights: false` the server's weights
 * are the user's business, and batches are recorded as the trainer's version.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { saveModel } from "../models/checkpoint.js";
import type { Tokenizer } from "../models/tokenizer.js";
import type { Transformer } from "../models/transformer.js";
import { isStale } from "../algorithms/off-policy.js";
import { RemoteSampler, type OpenAiSamplerConfig } from "../sampling/remote/index.js";
import { sampleGroupsRemote, type RemoteGroups } from "../rollout/remote-groups.js";
import type { GroupSamplingOptions } from "../rollout/groups.js";
import type { Rollout, RolloutGroup } from "../rollout/types.js";
import type { Example, Task } from "../tasks/types.js";

type TaskView = Pick<Task, "name" | "environment">;

/** A batch asked for ahead of its step. */
interface Pending {
  step: number;
  exampleIds: string[];
  result: Promise<RemoteGroups>;
}

/** Generation on a remote server for one run. */
export class RemoteGeneration {
  /** Rollouts whose inference log-probs could not be aligned (their old log-probs must be recomputed). */
  readonly noLogprobs = new Set<Rollout>();
  private serverVersion = 0;
  private pending: Pending | null = null;
  private pushedDir: string | null = null;
  private stepStats = { rollouts: 0, dropped: 0, retokenized: 0, mismatched: 0 };

  private constructor(
    private readonly sampler: RemoteSampler,
    private readonly config: OpenAiSamplerConfig,
    private readonly tokenizer: Tokenizer,
    private readonly weightsRoot: string,
    private readonly maxStaleness: number,
  ) {}

  /** Connects (checking that the server serves `sampler.model`). Weights are pushed under `<runRoot>/remote-weights`. */
  static async connect(
    config: OpenAiSamplerConfig,
    tokenizer: Tokenizer,
    runRoot: string,
    maxStaleness: number,
    warn: (msg: string) => void,
  ): Promise<RemoteGeneration> {
    const sampler = await RemoteSampler.connect(config, tokenizer, warn);
    return new RemoteGeneration(sampler, config, tokenizer, resolve(runRoot, "remote-weights"), maxStaleness);
  }

  /**
   * A generation batch of `step` (trainer version step − 1): the batch asked for ahead, when it is this step's first
   * batch of these examples, else a fresh request. Stale groups are dropped and counted.
   */
  async groups(task: TaskView, examples: readonly Example[], opts: GroupSamplingOptions, step: number) {
    const p = this.pending;
    const ahead = p && p.step === step && opts.idPrefix === `${step}` && sameIds(p.exampleIds, examples);
    if (p && !ahead) await p.result.catch(() => undefined); // a batch nobody will read: let it finish, drop it
    this.pending = null;
    const got = ahead ? await p.result : await this.request(task, examples, opts);
    got.noLogprobs.forEach((r) => this.noLogprobs.add(r));
    this.stepStats.retokenized += got.retokenized;
    this.stepStats.mismatched += got.noLogprobs.size;
    const kept: RolloutGroup[] = [];
    for (const g of got.groups) {
      const n = g.rollouts.length;
      this.stepStats.rollouts += n;
      if (g.rollouts.some((r) => isStale(r.policyVersion, step - 1, this.maxStaleness))) this.stepStats.dropped += n;
      else kept.push(g);
    }
    return kept;
  }

  /** Asks now for the batch of `step` (used when `maxStaleness` ≥ 1: it decodes while the current step trains). */
  prefetch(task: TaskView, examples: readonly Example[], opts: GroupSamplingOptions, step: number): void {
    const result = this.request(task, examples, opts);
    result.catch(() => undefined); // read (and rethrown) by `groups`
    this.pending = { step, exampleIds: examples.map((e) => e.id), result };
  }

  /**
   * Saves the weights as version `version` and loads them into the server (after the batch in flight finishes);
   * returns the seconds it took. A no-op with `pushWeights: false` (the version still advances).
   */
  async pushWeights(model: Transformer, version: number): Promise<number> {
    const t0 = performance.now();
    if (!this.config.pushWeights) {
      this.serverVersion = version;
      return 0;
    }
    if (this.pending) await this.pending.result.catch(() => undefined);
    const dir = join(this.weightsRoot, `v${version}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    saveModel(dir, model, this.tokenizer);
    await this.sampler.loadWeights(dir);
    if (this.pushedDir && this.pushedDir !== dir) rmSync(this.pushedDir, { recursive: true, force: true });
    this.pushedDir = dir;
    this.serverVersion = version;
    return (performance.now() - t0) / 1000;
  }

  /** This step's `remote/*` and staleness metrics; resets the counts. */
  takeMetrics(): Record<string, number> {
    const s = this.stepStats;
    const n = Math.max(1, s.rollouts);
    const out: Record<string, number> = {
      "mismatch/staleDroppedFrac": s.dropped / n,
      "remote/retokenizedFrac": s.retokenized / n,
      "remote/tokenMismatchFrac": s.mismatched / n,
      "remote/weightsVersion": this.serverVersion,
    };
    this.stepStats = { rollouts: 0, dropped: 0, retokenized: 0, mismatched: 0 };
    return out;
  }

  /** Waits for a batch still in flight (the end of a run). */
  async close(): Promise<void> {
    if (this.pending) await this.pending.result.catch(() => undefined);
    this.pending = null;
  }

  private request(task: TaskView, examples: readonly Example[], opts: GroupSamplingOptions): Promise<RemoteGroups> {
    const version = this.config.pushWeights ? this.serverVersion : opts.policyVersion;
    return sampleGroupsRemote(this.sampler, this.tokenizer, task, examples, { ...opts, policyVersion: version });
  }
}

function sameIds(ids: readonly string[], examples: readonly Example[]): boolean {
  return ids.length === examples.length && ids.every((id, i) => id === examples[i]!.id);
}
