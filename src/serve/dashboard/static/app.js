// The dashboard page: the run list, live charts of the selected run (plus overlaid runs), the sample browser and the
// config with its diff. Each open run has one EventSource (/api/runs/<run>/events) that delivers every complete
// metrics and eval line, then new ones as the trainer writes them. State is in the URL hash (#run=a&overlay=b,c).
import { chartBoxes, CHARTS, drawChart, resizeCharts } from "/static/charts.js";
import { renderSamples } from "/static/samples.js";

const $ = (id) => document.getElementById(id);
const api = async (path) => {
  const res = await fetch(path);
  const body = await res.json();
  if (!res.ok) throw new Error(body.error ?? `${res.status} ${path}`);
  return body;
};
const runUrl = (name) => `/api/runs/${encodeURIComponent(name)}`;

const state = { runs: [], selected: null, overlay: [], data: new Map(), sources: new Map(), boxes: [] };
window.rlvrDashboard = state; // for the browser test and for poking at in devtools

function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  return { run: p.get("run"), overlay: (p.get("overlay") ?? "").split(",").filter(Boolean) };
}
function writeHash() {
  const p = new URLSearchParams();
  if (state.selected) p.set("run", state.selected);
  if (state.overlay.length) p.set("overlay", state.overlay.join(","));
  history.replaceState(null, "", `#${p}`);
}

/** Opens (or keeps) one stream per shown run and closes the others. */
function syncStreams() {
  const shown = [state.selected, ...state.overlay].filter(Boolean);
  for (const [name, es] of state.sources) {
    if (!shown.includes(name)) {
      es.close();
      state.sources.delete(name);
      state.data.delete(name);
    }
  }
  for (const name of shown) if (!state.sources.has(name)) openStream(name);
  redraw();
}

function openStream(name) {
  const run = { name, metrics: [], eval: [], derived: [], steps: [], skipped: 0, raw: [] };
  state.data.set(name, run);
  const es = new EventSource(`${runUrl(name)}/events`);
  state.sources.set(name, es);
  const merge = (kind, msg) => {
    if (msg.reset) run[kind] = [];
    run[kind] = run[kind].concat(msg.records);
    if (kind === "metrics") run.skipped = (msg.reset ? 0 : run.skipped) + msg.skipped;
  };
  es.addEventListener("metrics", (e) => (merge("raw", JSON.parse(e.data)), remerge(run), redraw()));
  es.addEventListener("eval", (e) => (merge("eval", JSON.parse(e.data)), redraw()));
  es.addEventListener("samples", (e) => {
    const msg = JSON.parse(e.data);
    run.derived = msg.derived;
    run.steps = msg.steps;
    remerge(run);
    redraw();
    if (name === state.selected) updateSampleSteps(run);
  });
  es.onopen = () => setLive(true);
  es.onerror = () => setLive(false);
}

/** metrics = raw metrics lines with the samples-derived lengths of the same step added. */
function remerge(run) {
  const byStep = new Map(run.derived.map((d) => [d.step, d]));
  run.metrics = run.raw.map((r) => ({ ...byStep.get(r.step), ...r }));
}

function setLive(on) {
  $("live").textContent = on ? "live" : "reconnecting";
  $("live").className = on ? "live" : "live off";
}

function redraw() {
  const runs = [state.selected, ...state.overlay].map((n) => state.data.get(n)).filter(Boolean);
  if (runs.length === 0) return;
  CHARTS.forEach((chart, i) => drawChart(state.boxes[i], chart, runs));
  const main = runs[0];
  const last = main.raw.at(-1)?.step;
  const info = state.runs.find((r) => r.name === main.name);
  const planned = info?.plannedSteps ? ` of ${info.plannedSteps}` : "";
  $("status").textContent =
    `${main.raw.length} steps logged${last !== undefined ? `, last step ${last}${planned}` : ""}` +
    (main.skipped ? `; ${main.skipped} unreadable lines skipped` : "");
  $("status").dataset.steps = String(main.raw.length);
}

async function loadRuns() {
  const { dir, runs } = await api("/api/runs");
  $("dir").textContent = dir;
  state.runs = runs;
  const ul = $("runs");
  ul.textContent = "";
  for (const r of runs) {
    const li = ul.appendChild(document.createElement("li"));
    li.dataset.run = r.name;
    if (r.name === state.selected) li.className = "selected";
    const box = li.appendChild(document.createElement("input"));
    box.type = "checkbox";
    box.title = "overlay on the charts";
    box.checked = state.overlay.includes(r.name);
    box.disabled = r.name === state.selected;
    box.onchange = () => {
      state.overlay = box.checked ? [...state.overlay, r.name] : state.overlay.filter((n) => n !== r.name);
      writeHash();
      syncStreams();
    };
    const a = li.appendChild(document.createElement("a"));
    a.textContent = ` ${r.name}`;
    a.onclick = () => selectRun(r.name);
    const meta = li.appendChild(document.createElement("div"));
    meta.className = "hint";
    meta.textContent = `${r.task ?? "?"} · step ${r.lastStep ?? "-"}${r.plannedSteps ? `/${r.plannedSteps}` : ""}`;
  }
  const diff = $("diff-with");
  const keep = diff.value;
  diff.textContent = "";
  diff.appendChild(new Option("(none)", ""));
  for (const r of runs) if (r.name !== state.selected) diff.appendChild(new Option(r.name, r.name));
  diff.value = runs.some((r) => r.name === keep) ? keep : "";
}

async function selectRun(name) {
  state.selected = name;
  state.overlay = state.overlay.filter((n) => n !== name);
  writeHash();
  $("title").textContent = name;
  $("samples").textContent = "";
  $("sample-step").textContent = "";
  await loadRuns();
  syncStreams();
  const { config } = await api(`${runUrl(name)}/config`);
  $("config").textContent = config === null ? "(no config.json yet)" : JSON.stringify(config, null, 2);
  await showDiff();
}

function updateSampleSteps(run) {
  const select = $("sample-step");
  const had = select.options.length;
  const keep = select.value;
  const atEnd = had === 0 || keep === select.options[had - 1]?.value;
  select.textContent = "";
  for (const s of run.steps) select.appendChild(new Option(String(s), String(s)));
  if (run.steps.length === 0) return;
  select.value = atEnd ? String(run.steps.at(-1)) : keep;
  if (select.value !== keep) void showSamples();
}

let samplesRequest = 0;

/** Renders the chosen step's samples; a reply that a newer request has overtaken is dropped. */
async function showSamples() {
  const step = $("sample-step").value;
  if (!state.selected || step === "") return;
  const request = ++samplesRequest;
  const { groups } = await api(`${runUrl(state.selected)}/samples?step=${step}`);
  if (request !== samplesRequest) return;
  const filter = document.querySelector("input[name=filter]:checked").value;
  const n = renderSamples($("samples"), groups, filter);
  const count = $("sample-count");
  count.textContent = `${n} completions shown`;
  count.dataset.step = step;
  count.dataset.filter = filter;
}

async function showDiff() {
  const other = $("diff-with").value;
  const table = $("diff");
  table.textContent = "";
  if (!other || !state.selected) return;
  const { changes } = await api(`/api/diff?a=${encodeURIComponent(state.selected)}&b=${encodeURIComponent(other)}`);
  const head = table.insertRow();
  for (const h of ["field", state.selected, other]) head.appendChild(document.createElement("th")).textContent = h;
  const show = (v) => (v === undefined ? "(absent)" : JSON.stringify(v));
  for (const c of changes) {
    const tr = table.insertRow();
    for (const v of [c.path, show(c.a), show(c.b)]) tr.insertCell().textContent = v;
  }
  if (changes.length === 0) table.insertRow().insertCell().textContent = "the configs are the same";
}

state.boxes = chartBoxes($("charts"));
$("sample-step").onchange = showSamples;
for (const r of document.querySelectorAll("input[name=filter]")) r.onchange = showSamples;
$("diff-with").onchange = showDiff;
window.addEventListener("resize", () => resizeCharts(state.boxes));
const start = readHash();
state.overlay = start.overlay;

/** Opens the run named in the URL, else the newest; until one exists (a run about to start), says so. */
async function pickRun() {
  const wanted = start.run && state.runs.some((r) => r.name === start.run) ? start.run : null;
  const first = wanted ?? (start.run ? null : state.runs[0]?.name);
  if (first) await selectRun(first);
  else $("status").textContent = start.run ? `waiting for run ${start.run}` : "no runs in this folder yet";
}

setInterval(() => {
  loadRuns()
    .then(() => (state.selected ? undefined : pickRun()))
    .catch(() => {});
}, 5000);
await loadRuns();
await pickRun();
