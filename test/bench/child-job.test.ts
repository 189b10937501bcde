/**
 * Resuming benchmark jobs (bench/harness/child-job.ts): a finished job leaves a stamp (script, spec, source hash);
 * with BENCH_JOB_REUSE=1 a job whose stamp matches is not run again, and any change to the spec, the stamp's source
 * or a missing result runs it. A stand-in job script counts its runs.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { jobSource, reusableResult, runChildJob, type JobStamp } from "../../bench/harness/child-job.js";

const SCRIPT = "test/bench/fixtures/count-job.ts";

describe("runChildJob with BENCH_JOB_REUSE", () => {
  const saved = process.env.BENCH_JOB_REUSE;
  afterEach(() => {
    if (saved === undefined) delete process.env.BENCH_JOB_REUSE;
    else process.env.BENCH_JOB_REUSE = saved;
  });

  it("reuses a stamped result only when asked and only for the same spec and source", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-job-"));
    const counter = join(dir, "runs.txt");
    writeFileSync(counter, "");
    const out = join(dir, "result.json");
    const runs = () => readFileSync(counter, "utf8").split("\n").filter(Boolean).length;
    const spec = { out, counter, value: 7 };
    try {
      delete process.env.BENCH_JOB_REUSE;
      expect(await runChildJob(SCRIPT, spec, out, "count")).toEqual({ value: 7 });
      expect(runs()).toBe(1);
      const stamp = JSON.parse(readFileSync(`${out}.stamp.json`, "utf8")) as JobStamp;
      expect(stamp.script).toBe(SCRIPT);
      expect(stamp.spec).toEqual(spec);
      expect(stamp.source).toBe(jobSource(SCRIPT));
      // without the flag the job runs again
      await runChildJob(SCRIPT, spec, out, "count");
      expect(runs()).toBe(2);
      // with it, the stored result comes back and nothing runs
      process.env.BENCH_JOB_REUSE = "1";
      expect(await runChildJob(SCRIPT, spec, out, "count")).toEqual({ value: 7 });
      expect(runs()).toBe(2);
      // another spec runs (and restamps)
      expect(await runChildJob(SCRIPT, { ...spec, value: 8 }, out, "count")).toEqual({ value: 8 });
      expect(runs()).toBe(3);
      // code that changed (a stamp of another source) runs
      writeFileSync(`${out}.stamp.json`, JSON.stringify({ ...stamp, spec: { ...spec, value: 8 }, source: "older" }));
      await runChildJob(SCRIPT, { ...spec, value: 8 }, out, "count");
      expect(runs()).toBe(4);
      // a missing result (a job stopped before it wrote one) runs
      rmSync(out);
      expect(reusableResult(SCRIPT, { ...spec, value: 8 }, out, jobSource(SCRIPT))).toBeNull();
      await runChildJob(SCRIPT, { ...spec, value: 8 }, out, "count");
      expect(runs()).toBe(5);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
