/**
 * The dashboard server without a browser: its routes (through Fastify's inject), the SSE stream (through a real
 * socket), and the half-written lines a run being written leaves. Run folders are written by the trainer's RunDir
 * (fixture.ts), so the values below are hand-computed from the fixture's formulas.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDashboard, startDashboard, type Dashboard } from "../../src/serve/dashboard/index.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { halfLine, logStep, metricsAt, writeRun } from "./fixture.js";

let dir: string;
let dash: Dashboard;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rlvr-dash-server-"));
  writeRun(dir, "a", 3);
  writeRun(dir, "b", 2, { lr: 0.002 });
  writeRun(join(dir, "group"), "inner", 1);
  mkdirSync(join(dir, "not-a-run"));
  dash = buildDashboard({ dir });
});
afterAll(async () => {
  await dash.app.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = async (url: string) => {
  const res = await dash.app.inject({ method: "GET", url });
  return { status: res.statusCode, body: res.json() as Record<string, unknown>, type: res.headers["content-type"] };
};

describe("dashboard routes", () => {
  it("lists the runs, grouped ones by their path, and nothing else", async () => {
    const { body } = await get("/api/runs");
    const runs = body.runs as { name: string; lastStep: number | null; task: string; plannedSteps: number }[];
    expect(runs.map((r) => r.name).sort()).toEqual(["a", "b", "group/inner"]);
    const a = runs.find((r) => r.name === "a")!;
    expect(a).toMatchObject({ lastStep: 3, task: "addition", plannedSteps: 10 });
  });

  it("serves metrics, evals, config and a grouped run by its encoded name", async () => {
    const m = await get("/api/runs/a/metrics");
    expect((m.body.records as unknown[]).length).toBe(3);
    expect((m.body.records as Record<string, number>[])[2]).toEqual(metricsAt(3));
    const e = await get("/api/runs/a/eval");
    expect((e.body.records as { step: number }[]).map((r) => r.step)).toEqual([0, 2]);
    const c = await get("/api/runs/a/config");
    expect(c.body).toMatchObject({ run: "a", correctTerm: "correct", config: { train: { lr: 0.001 } } });
    const inner = await get(`/api/runs/${encodeURIComponent("group/inner")}/metrics`);
    expect((inner.body.records as unknown[]).length).toBe(1);
  });

  it("marks sampled completions correct, wrong or null, and derives their lengths per step", async () => {
    const { body } = await get("/api/runs/a/samples");
    expect(body.steps).toEqual([1, 2, 3]);
    // correct = 4 + step tokens, wrong = 10 tokens; the unscored completion counts in neither.
    expect(body.derived).toEqual(
      [1, 2, 3].map((s) => ({ step: s, "samples/length/correctMean": 4 + s, "samples/length/wrongMean": 10 })),
    );
    const at2 = await get("/api/runs/a/samples?step=2");
    const completions = (at2.body.groups as { completions: { correct: boolean | null; finish: string }[] }[])[0]!
      .completions;
    expect(completions.map((c) => c.correct)).toEqual([true, false, null]);
    expect((await get("/api/runs/a/samples?step=9")).status).toBe(404);
    expect((await get("/api/runs/a/samples?step=x")).status).toBe(400);
  });

  it("diffs two configs field by field", async () => {
    const { body } = await get("/api/diff?a=a&b=b");
    expect(body.changes).toEqual([{ path: "train.lr", a: 0.001, b: 0.002 }]);
    expect((await get("/api/diff?a=a")).status).toBe(400);
  });

  it("refuses unknown runs, paths out of the folder and unknown files with 404", async () => {
    for (const url of [
      "/api/runs/nope/metrics",
      "/api/runs/not-a-run/metrics",
      `/api/runs/${encodeURIComponent("../a")}/config`,
      `/api/runs/${encodeURIComponent("/etc")}/config`,
      "/static/..%2Fserver.ts",
      "/static/server.ts",
      "/vendor/package.json",
      "/api/diff?a=a&b=nope",
    ]) {
      const res = await get(url);
      expect(res.status, url).toBe(404);
      expect(typeof res.body.error, url).toBe("string");
    }
    expect((await get("/api/runs/nope/metrics")).body.error).toBe(`no run "nope" in ${dir}`);
  });

  it("serves the page, its scripts and uPlot from node_modules", async () => {
    for (const [url, type, text] of [
      ["/", "text/html", "rlvr dashboard"],
      ["/static/app.js", "text/javascript", "EventSource"],
      ["/static/charts.js", "text/javascript", "/vendor/uPlot.esm.js"],
      ["/vendor/uPlot.esm.js", "text/javascript", "export { uPlot as default }"],
      ["/vendor/uPlot.min.css", "text/css", ".uplot"],
    ]) {
      const res = await dash.app.inject({ method: "GET", url: url! });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers["content-type"], url).toContain(type);
      expect(res.body, url).toContain(text);
    }
    expect((await dash.app.inject({ method: "GET", url: "/favicon.ico" })).statusCode).toBe(204);
  });
});

describe("half-written and malformed lines", () => {
  it("leaves out a half-written last line and counts a malformed complete one", async () => {
    const run = writeRun(dir, "torn", 2);
    halfLine(run, 3);
    let m = await get("/api/runs/torn/metrics");
    expect((m.body.records as unknown[]).length).toBe(2);
    expect(m.body.pendingBytes).toBe(20);
    expect((await get("/api/runs")).body.runs).toContainEqual(expect.objectContaining({ name: "torn", lastStep: 2 }));
    // A killed writer's torn line followed by a good one: the torn line is skipped and counted, the good one read.
    appendFileSync(run.metricsPath, "\n");
    run.logMetrics(metricsAt(4));
    m = await get("/api/runs/torn/metrics");
    expect((m.body.records as { step: number }[]).map((r) => r.step)).toEqual([1, 2, 4]);
    expect(m.body.skipped).toBe(1);
  });

  it("shows a run whose config.json is half-written", async () => {
    const run = writeRun(dir, "noconfig", 1);
    writeFileSync(run.configPath, '{"name": "x", "tra');
    expect((await get("/api/runs/noconfig/config")).body.config).toBeNull();
    expect((await get("/api/runs")).body.runs).toContainEqual(
      expect.objectContaining({ name: "noconfig", task: null }),
    );
  });
});

/** Reads SSE events from a stream until `until` returns true for the list so far. */
async function readEvents(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  events: { event: string; data: Record<string, unknown> }[],
  until: (evs: typeof events) => boolean,
): Promise<void> {
  const decoder = new TextDecoder();
  let buf = "";
  while (!until(events)) {
    const { value, done } = await reader.read();
    if (done) throw new Error("stream ended");
    buf += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event && data) events.push({ event, data: JSON.parse(data) });
    }
  }
}

describe("live stream (SSE)", () => {
  it("sends every complete line, then each new line once it completes, and a reset on resume", async () => {
    const sub = mkdtempSync(join(tmpdir(), "rlvr-dash-sse-"));
    const run = writeRun(sub, "live", 2);
    const live = await startDashboard({ dir: sub, port: 0, pollMs: 20 });
    const ctl = new AbortController();
    try {
      const res = await fetch(`${live.url}/api/runs/live/events`, { signal: ctl.signal });
      expect(res.headers.get("content-type")).toContain("text/event-stream");
      const reader = res.body!.getReader();
      const events: { event: string; data: Record<string, unknown> }[] = [];
      const metrics = () => events.filter((e) => e.event === "metrics");
      await readEvents(reader, events, (evs) => evs.some((e) => e.event === "samples"));
      expect(metrics()).toEqual([
        { event: "metrics", data: { reset: true, records: [metricsAt(1), metricsAt(2)], skipped: 0 } },
      ]);
      expect(events.find((e) => e.event === "eval")!.data.records).toEqual([
        { step: 0, "eval/addition/pass@1": 0.2 },
        { step: 2, "eval/addition/pass@1": 0.22 },
      ]);

      const rest = halfLine(run, 3);
      await new Promise((r) => setTimeout(r, 150));
      appendFileSync(run.metricsPath, rest);
      await readEvents(reader, events, () => metrics().length === 2);
      expect(metrics()[1]!.data).toEqual({ reset: false, records: [metricsAt(3)], skipped: 0 });

      logStep(run, 4);
      await readEvents(reader, events, () => metrics().length === 3);
      expect(metrics()[2]!.data.records).toEqual([metricsAt(4)]);

      // Resume from a checkpoint at step 2 rewrites the file (atomic rename): the stream starts it over.
      new RunDir(run.root).truncateAfter(2);
      await readEvents(reader, events, () => metrics().length === 4);
      expect(metrics()[3]!.data).toEqual({ reset: true, records: [metricsAt(1), metricsAt(2)], skipped: 0 });
    } finally {
      ctl.abort();
      await live.close();
      rmSync(sub, { recursive: true, force: true });
    }
  });

  it("closes with open streams instead of waiting on them", async () => {
    const live = await startDashboard({ dir, port: 0 });
    const res = await fetch(`${live.url}/api/runs/a/events`);
    const reader = res.body!.getReader();
    await reader.read();
    const t0 = Date.now();
    await live.close();
    expect(Date.now() - t0).toBeLessThan(2000);
    await expect(reader.read()).resolves.toMatchObject({ done: true });
  });
});
