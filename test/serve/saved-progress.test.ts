/**
 * A worker saves a job's finished items as the job's progress and a worker that takes the job over scores only the
 * rest (src/serve/worker.ts `scoreJob`, `savedResults`). Checked on stand-in jobs (the fields of a BullMQ job that
 * scoreJob reads), with no Redis; queue-kill.test.ts checks the same through a killed worker process.
 */
import type { Job } from "bullmq";
import { describe, expect, it } from "vitest";
import { tasks } from "../../src/tasks/index.js";
import type { ItemResult } from "../../src/serve/index.js";
import { JOB_FORMAT, type ScoreJobData } from "../../src/serve/queue-settings.js";
import { savedResults, scoreJob } from "../../src/serve/worker.js";
import { slowItem, slowRegistry } from "./queue-helpers.js";

/** A stand-in job: data, saved progress, and the progress it is given. */
function job(items: ReturnType<typeof slowItem>[], progress: unknown = 0, deadlineInMs = 60_000) {
  const saves: { results: (ItemResult | null)[] }[] = [];
  const data: ScoreJobData = { format: JOB_FORMAT, items, timeoutMs: 60_000, deadline: Date.now() + deadlineInMs };
  const fake = {
    id: "job-1",
    data,
    progress,
    updateProgress: async (p: { results: (ItemResult | null)[] }) => void saves.push(structuredClone(p)),
  };
  return { job: fake as unknown as Job<ScoreJobData, ItemResult[] | ItemResult>, saves };
}

const ok = (v: number): ItemResult => ({ score: v, terms: { value: v } });

describe("savedResults", () => {
  it("reads a saved progress of the right format and length, and nothing else", () => {
    const good = { format: JOB_FORMAT, results: [ok(1), null, { error: { code: "timeout", message: "late" } }] };
    expect(savedResults(good, 3)).toEqual(good.results);
    for (const bad of [
      0, // BullMQ's default progress
      null,
      "text",
      { ...good, format: JOB_FORMAT - 1 },
      { ...good, results: [ok(1)] }, // another length
      { ...good, results: [ok(1), null, 7] }, // not a result
      { format: JOB_FORMAT },
    ]) {
      expect(savedResults(bad, 3)).toEqual([null, null, null]);
    }
  });
});

describe("scoreJob", () => {
  it("scores only the items without a saved result and keeps the saved ones in place", async () => {
    const { registry, calls } = slowRegistry();
    const items = [0, 1, 2, 3].map((v) => slowItem(0, v));
    // Saved results that differ from what scoring would give, so a rescored item would show.
    const saved = { format: JOB_FORMAT, results: [ok(10), null, ok(12), null] };
    const { job: j } = job(items, saved);
    const out = await scoreJob(j, { rewards: registry, tasks, progressMs: 1000 });
    expect(out).toEqual([ok(10), ok(1), ok(12), ok(3)]);
    expect(calls()).toBe(2);
  });

  it("a job whose items are all saved is answered without scoring", async () => {
    const { registry, calls } = slowRegistry();
    const { job: j } = job([slowItem(0, 5)], { format: JOB_FORMAT, results: [ok(5)] });
    expect(await scoreJob(j, { rewards: registry, tasks, progressMs: 1000 })).toEqual([ok(5)]);
    expect(calls()).toBe(0);
  });

  it("saves finished items while slow ones run, and only when something new finished", async () => {
    const { registry } = slowRegistry();
    const items = [slowItem(0, 0), slowItem(400, 1)];
    const { job: j, saves } = job(items);
    const saved: number[] = [];
    const out = await scoreJob(j, { rewards: registry, tasks, progressMs: 60, onSaved: (_id, n) => saved.push(n) });
    expect(out).toEqual([ok(0), ok(1)]);
    // Item 0 is saved once (about 6 ticks pass while item 1 runs, none with news); the job's end carries item 1.
    expect(saves).toEqual([{ format: JOB_FORMAT, results: [ok(0), null] }]);
    expect(saved).toEqual([1]);
  });

  it("past the request's deadline, answers the saved items and `timeout` for the rest", async () => {
    const { registry, calls } = slowRegistry();
    const { job: j } = job([slowItem(0, 0), slowItem(0, 1)], { format: JOB_FORMAT, results: [ok(0), null] }, -1);
    const out = (await scoreJob(j, { rewards: registry, tasks, progressMs: 1000 })) as ItemResult[];
    expect(out[0]).toEqual(ok(0));
    expect(out[1]).toMatchObject({ error: { code: "timeout" } });
    expect(calls()).toBe(0);
    // With nothing saved, the whole job is one timeout, as before.
    const { job: none } = job([slowItem(0, 0)], 0, -1);
    expect(await scoreJob(none, { rewards: registry, tasks, progressMs: 1000 })).toMatchObject({
      error: { code: "timeout" },
    });
  });
});
