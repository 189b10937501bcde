// Chart definitions and uPlot wiring for the dashboard. Each chart names the metric keys it draws (a fixed list or
// a pattern over the keys the run logged); keys a run did not log are left out, and a chart with none says so.
// Every chart's x axis is the step; overlaid runs share it, with null where a run has no line for a step.
import uPlot from "/vendor/uPlot.esm.js";

const re = (pattern) => (keys) => keys.filter((k) => pattern.test(k)).sort();
const fixed = (list) => (keys) => list.filter((k) => keys.includes(k));

/** The charts, in page order; `source` is the record list they read ("metrics" also holds samples-derived keys). */
export const CHARTS = [
  {
    id: "reward",
    title: "Reward: mean and each term",
    source: "metrics",
    keys: (keys) => [...fixed(["reward/mean"])(keys), ...re(/^reward\/[^/]+\/mean$/)(keys)],
  },
  { id: "pass1", title: "Held-out pass@1", source: "eval", keys: re(/^eval\/.+\/pass@1$/) },
  { id: "kl", title: "KL", source: "metrics", keys: fixed(["kl/ref", "kl/refK3", "policy/approxKl"]) },
  { id: "entropy", title: "Entropy (mean per token)", source: "metrics", keys: fixed(["entropy/mean"]) },
  {
    id: "length",
    title: "Completion length (tokens; correct and wrong)",
    source: "metrics",
    keys: fixed([
      "length/mean",
      "length/correctMean",
      "length/wrongMean",
      "samples/length/correctMean",
      "samples/length/wrongMean",
    ]),
  },
  { id: "zerostd", title: "Zero-std group fraction", source: "metrics", keys: fixed(["groups/zeroStdFrac"]) },
  { id: "clip", title: "Clip fraction", source: "metrics", keys: re(/^clip\/.+Frac$/) },
  { id: "grad", title: "Gradient norm", source: "metrics", keys: fixed(["grad/norm"]) },
  {
    id: "time",
    title: "Step time by phase (s)",
    source: "metrics",
    keys: (keys) =>
      re(/^time\/.+$/)(keys)
        .filter((k) => k !== "time/step")
        .concat(fixed(["time/step"])(keys)),
  },
];

const COLORS = ["#1565c0", "#c62828", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f", "#8d6e63", "#546e7a", "#d81b60"];
const DASHES = [[], [6, 4], [2, 3], [10, 3, 2, 3]];

/**
 * The uPlot data of one chart: x = every step any run has, one series per (run, key). Returns null when no run
 * logged any of the chart's keys.
 */
export function chartData(chart, runs) {
  const series = [];
  const steps = new Set();
  runs.forEach((run, r) => {
    const records = run[chart.source];
    const present = new Set(records.flatMap((rec) => Object.keys(rec)));
    chart.keys([...present]).forEach((key, k) => series.push({ run: run.name, runIndex: r, keyIndex: k, key }));
    for (const rec of records) if (typeof rec.step === "number") steps.add(rec.step);
  });
  if (series.length === 0) return null;
  const xs = [...steps].sort((a, b) => a - b);
  const at = new Map(xs.map((s, i) => [s, i]));
  const columns = series.map((s) => {
    const col = new Array(xs.length).fill(null);
    for (const rec of runs[s.runIndex][chart.source]) {
      const v = rec[s.key];
      if (typeof rec.step === "number" && typeof v === "number" && Number.isFinite(v)) col[at.get(rec.step)] = v;
    }
    return col;
  });
  return { xs, series, columns };
}

/** Draws or updates one chart in `box`; keeps the uPlot instance on the box and returns it. */
export function drawChart(box, chart, runs) {
  const data = chartData(chart, runs);
  const body = box.querySelector(".body");
  if (data === null) {
    box.plot?.destroy();
    box.plot = null;
    box.signature = "";
    body.textContent = "";
    const p = body.appendChild(document.createElement("p"));
    p.className = "empty";
    p.textContent = "not logged by this run";
    box.dataset.points = "0";
    return null;
  }
  const overlay = runs.length > 1;
  const signature = JSON.stringify(data.series.map((s) => [s.run, s.key]));
  const aligned = [data.xs, ...data.columns];
  box.dataset.points = String(data.xs.length);
  box.dataset.series = String(data.series.length);
  if (box.plot && box.signature === signature) {
    box.plot.setData(aligned);
    return box.plot;
  }
  box.plot?.destroy();
  body.textContent = "";
  const opts = {
    width: Math.max(300, box.clientWidth - 16),
    height: 220,
    scales: { x: { time: false } },
    axes: [{ label: "step" }, {}],
    series: [
      { label: "step" },
      ...data.series.map((s) => ({
        label: overlay ? `${s.run}: ${s.key}` : s.key,
        stroke: COLORS[s.keyIndex % COLORS.length],
        dash: DASHES[s.runIndex % DASHES.length],
        width: 1.5,
        spanGaps: true,
        points: { show: data.xs.length <= 60 },
      })),
    ],
  };
  box.plot = new uPlot(opts, aligned, body);
  box.signature = signature;
  return box.plot;
}

/** Creates the chart boxes once, in CHARTS order. */
export function chartBoxes(container) {
  container.textContent = "";
  return CHARTS.map((chart) => {
    const box = container.appendChild(document.createElement("div"));
    box.className = "chart";
    box.dataset.chart = chart.id;
    box.appendChild(document.createElement("h3")).textContent = chart.title;
    box.appendChild(document.createElement("div")).className = "body";
    return box;
  });
}

/** Resizes every chart to its box (window resize). */
export function resizeCharts(boxes) {
  for (const box of boxes) box.plot?.setSize({ width: Math.max(300, box.clientWidth - 16), height: 220 });
}
