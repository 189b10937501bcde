// The sample browser: one step's sampled groups (samples.jsonl) with prompt, completions, reward terms and
// advantages, filtered to correct, wrong, null (unscored) or truncated (finish "length") completions. Multi-turn and
// worker rollouts show their segments, turns and environment errors where the record has them. Everything from the
// run goes in as text (textContent), never as HTML.

/** Which filter a completion passes. */
export function matches(filter, c) {
  if (filter === "correct") return c.correct === true;
  if (filter === "wrong") return c.correct === false;
  if (filter === "null") return c.reward === null || c.reward === undefined;
  if (filter === "truncated") return c.finish === "length";
  return true;
}

const el = (parent, tag, text, cls) => {
  const e = parent.appendChild(document.createElement(tag));
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
};
const num = (x) => (typeof x === "number" ? String(Math.round(x * 1e4) / 1e4) : "null");

/** Renders `groups` into `box` under `filter`; returns how many completions were shown. */
export function renderSamples(box, groups, filter) {
  box.textContent = "";
  let shown = 0;
  for (const g of groups) {
    const completions = (g.completions ?? []).map((c, i) => ({ ...c, index: i })).filter((c) => matches(filter, c));
    if (completions.length === 0) continue;
    const div = el(box, "div", undefined, "group");
    el(div, "div", `group ${g.group ?? "?"} · example ${g.example ?? "?"}`, "hint");
    el(div, "pre", typeof g.prompt === "string" ? g.prompt : JSON.stringify(g.prompt, null, 2), "prompt");
    const table = el(div, "table");
    const head = el(table, "tr");
    for (const h of ["#", "", "finish", "tokens", "reward", "terms", "advantage", "completion"]) el(head, "th", h);
    for (const c of completions) {
      const kind = c.correct === true ? "correct" : c.correct === false ? "wrong" : "null";
      const tr = el(table, "tr", undefined, `completion ${kind}`);
      el(tr, "td", String(c.index));
      el(tr, "td", kind, "tag");
      el(tr, "td", c.finish ?? "");
      el(tr, "td", c.tokens === undefined ? "" : String(c.tokens));
      el(tr, "td", num(c.reward));
      el(
        tr,
        "td",
        Object.entries(c.terms ?? {})
          .map(([k, v]) => `${k} ${num(v)}`)
          .join("\n"),
      );
      el(tr, "td", num(c.advantage));
      const text = el(tr, "td");
      renderText(text, c);
      shown++;
    }
  }
  if (shown === 0) el(box, "p", "no completion at this step matches the filter", "hint");
  return shown;
}

/** The completion text, split into its segments (tool output, worker turns) when the record has them. */
function renderText(td, c) {
  if (Array.isArray(c.segments)) {
    for (const s of c.segments) {
      const kind = String(s.kind ?? s.role ?? s.source ?? "text");
      const span = el(td, "span", undefined, `segment ${kind}`);
      el(span, "span", `[${kind}${s.worker !== undefined ? ` ${s.worker}` : ""}] `, "hint");
      el(span, "span", String(s.text ?? s.content ?? ""));
    }
  } else {
    el(td, "pre", c.text ?? "");
  }
  const extra = [];
  if (c.turns !== undefined) extra.push(`turns ${c.turns}`);
  if (Array.isArray(c.envErrors) && c.envErrors.length) extra.push(`env errors: ${c.envErrors.map(String).join("; ")}`);
  if (c.error) extra.push(`reward error: ${c.error}`);
  if (extra.length) el(td, "div", extra.join(" · "), "hint");
}
