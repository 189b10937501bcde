/**
 * The dashboard in a real browser: Debian's chromium driven headless by playwright-core. A run is written while the
 * page is open; the charts must show one point per logged step, a step appended after load must appear without a
 * reload (SSE), a half-written last line must not break the page, overlaying a second run must add its series, and
 * the sample filters and config diff must show what the files hold. A screenshot is kept in
 * runs/test-artifacts/dashboard.png (gitignored; its path is printed). Without a chromium binary the test skips with
 * a message, unless RLVR_REQUIRE_CHROMIUM=1 (CI), where it fails. RLVR_CHROMIUM names another binary.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { RunDir } from "../../src/trainer/run-dir.js";
import { startDashboard, type RunningDashboard } from "../../src/serve/dashboard/index.js";
import { halfLine, logStep, writeRun } from "./fixture.js";

const ARTIFACTS = resolve(__dirname, "..", "..", "runs", "test-artifacts");

/** The chromium binary: $RLVR_CHROMIUM, else the first of Debian's names on PATH. */
function findChromium(): string | null {
  if (process.env.RLVR_CHROMIUM) return process.env.RLVR_CHROMIUM;
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    try {
      return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim() || null;
    } catch {
      // not on PATH
    }
  }
  return null;
}

const CHROMIUM = findChromium();
const REQUIRED = process.env.RLVR_REQUIRE_CHROMIUM === "1";
if (!CHROMIUM && !REQUIRED) {
  console.warn("test/dashboard/browser.test.ts: skipped, no chromium binary (apt-get install -y chromium)");
}

/** What the page's scripts see; this file is compiled without the DOM library, so the page is typed here. */
interface PageGlobals {
  document: { querySelector(selector: string): { plot?: { data: (number | null)[][]; series: { label: string }[] } } };
  marker?: number;
}

/** A chart's uPlot data (x then each series) and its series labels, read from the live instance in the page. */
async function chartData(page: Page, id: string): Promise<{ data: (number | null)[][]; labels: string[] }> {
  return page.evaluate((chartId) => {
    const plot = (globalThis as unknown as PageGlobals).document.querySelector(`[data-chart="${chartId}"]`).plot;
    return { data: plot?.data ?? [], labels: plot?.series.slice(1).map((s) => s.label) ?? [] };
  }, id);
}

/** Number of x values in a chart, and of non-null values in each of its series. */
async function chartPoints(page: Page, id: string): Promise<{ xs: number; series: Record<string, number> }> {
  const { data, labels } = await chartData(page, id);
  const series = Object.fromEntries(labels.map((l, i) => [l, data[i + 1]!.filter((v) => v !== null).length]));
  return { xs: data[0]?.length ?? 0, series };
}

describe.skipIf(!CHROMIUM && !REQUIRED)("dashboard in chromium", () => {
  let dir: string;
  let dashboard: RunningDashboard;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!CHROMIUM)
      throw new Error("RLVR_REQUIRE_CHROMIUM=1 but no chromium binary found (apt-get install -y chromium)");
    dir = mkdtempSync(join(tmpdir(), "rlvr-dash-browser-"));
    writeRun(dir, "live", 5);
    writeRun(dir, "other", 3, { lr: 0.002 });
    dashboard = await startDashboard({ dir, port: 0, pollMs: 100 });
    // --no-sandbox: CI runs as root in a container, where chromium's sandbox cannot start.
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
    page = await browser.newPage({ viewport: { width: 1400, height: 1800 } });
    page.on("pageerror", (err) => pageErrors.push(err.message));
    page.on("console", (msg) => void (msg.type() === "error" && pageErrors.push(msg.text())));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("renders one point per step, then a new step without a reload", async () => {
    await page.goto(`${dashboard.url}/#run=live`);
    await page.waitForSelector('[data-chart="reward"][data-points="5"]', { timeout: 20_000 });
    const reward = await chartPoints(page, "reward");
    expect(reward).toEqual({ xs: 5, series: { "reward/mean": 5, "reward/correct/mean": 5, "reward/format/mean": 5 } });
    // Evaluations at steps 0, 2 and 4.
    expect(await chartPoints(page, "pass1")).toEqual({ xs: 3, series: { "eval/addition/pass@1": 3 } });
    // Correct and wrong lengths come from the sampled groups: correct = 4 + step tokens, wrong = 10.
    expect((await chartData(page, "length")).data).toEqual([
      [1, 2, 3, 4, 5],
      [7, 7, 7, 7, 7],
      [5, 6, 7, 8, 9],
      [10, 10, 10, 10, 10],
    ]);
    for (const id of ["kl", "entropy", "zerostd", "clip", "grad", "time"]) {
      expect((await chartPoints(page, id)).xs, id).toBe(5);
      expect(await page.locator(`[data-chart="${id}"] canvas`).count(), id).toBe(1);
    }

    await page.evaluate(() => ((globalThis as unknown as PageGlobals).marker = 42));
    // A writer caught mid-line: the page keeps its 5 points and keeps working.
    const run = new RunDir(join(dir, "live"));
    const rest = halfLine(run, 6);
    await page.waitForTimeout(600);
    expect((await chartPoints(page, "reward")).xs).toBe(5);
    // The line completes; then a whole new step lands.
    appendFileSync(join(dir, "live", "metrics.jsonl"), rest);
    await page.waitForSelector('[data-chart="reward"][data-points="6"]', { timeout: 10_000 });
    logStep(run, 7);
    await page.waitForSelector('[data-chart="reward"][data-points="7"]', { timeout: 10_000 });
    expect((await chartData(page, "grad")).data[1]!.at(-1)).toBeCloseTo(1 / 7, 12);
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).marker)).toBe(42);
    expect(await page.locator("#status").getAttribute("data-steps")).toBe("7");
  }, 60_000);

  it("overlays a second run on the same charts", async () => {
    await page.locator('li[data-run="other"] input[type=checkbox]').check();
    await page.waitForSelector('[data-chart="reward"][data-series="6"]', { timeout: 10_000 });
    const reward = await chartPoints(page, "reward");
    expect(reward.xs).toBe(7);
    expect(reward.series["live: reward/mean"]).toBe(7);
    expect(reward.series["other: reward/mean"]).toBe(3);
  }, 30_000);

  it("filters samples and diffs configs", async () => {
    await page.waitForSelector("#sample-step option[value='7']", { state: "attached", timeout: 10_000 });
    await page.selectOption("#sample-step", "3");
    await page.waitForSelector('#sample-count[data-step="3"]');
    expect(await page.locator("#samples tr.completion").count()).toBe(3);
    for (const [filter, kind, n] of [
      ["correct", "correct", 1],
      ["wrong", "wrong", 1],
      ["null", "null", 1],
      ["truncated", "wrong", 1],
    ] as const) {
      await page.locator(`input[name=filter][value=${filter}]`).check();
      // The count's data-filter says which filter the table was rendered for; the text alone can be the last one's.
      await page.waitForSelector(`#sample-count[data-filter="${filter}"]:text-matches("^${n} ")`);
      expect(await page.locator(`#samples tr.completion.${kind}`).count(), filter).toBe(n);
    }
    await page.locator("input[name=filter][value=all]").check();
    await page.waitForSelector('#sample-count[data-filter="all"]:text-matches("^3 ")');
    // A multi-turn completion shows its segments by kind, its turns and its environment errors.
    const inserted = page.locator("#samples tr.completion.wrong .segment.inserted");
    await expect(inserted.textContent()).resolves.toBe("[inserted] tool says 2");
    expect(await page.locator("#samples tr.completion.wrong .segment.model").count()).toBe(2);
    await expect(page.locator("#samples tr.completion.wrong").textContent()).resolves.toContain(
      "turns 2 · env errors: unknown tool",
    );
    // Completion text is shown as text, never parsed as HTML.
    expect(await page.locator("#samples b").count()).toBe(0);
    await expect(page.locator("#samples").textContent()).resolves.toContain("<b>not html</b>");

    await page.selectOption("#diff-with", "other");
    await page.waitForSelector("#diff td");
    const rows = await page.locator("#diff tr").allTextContents();
    expect(rows).toEqual(["fieldliveother", "train.lr0.0010.002"]);

    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, "dashboard.png");
    await page.screenshot({ path: shot, fullPage: true });
    expect(existsSync(shot) && statSync(shot).size > 10_000).toBe(true);
    console.log(`dashboard screenshot: ${shot}`);
    expect(pageErrors).toEqual([]);
  }, 30_000);
});
