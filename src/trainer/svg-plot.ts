/**
 * A line chart of training curves as a standalone SVG (no dependencies): x is the step, each series a polyline
 * with point markers, nice-number ticks on both axes, and a legend. Used for `plot.svg` (reward and held-out
 * pass@1 over steps).
 */

/** One curve: name, colour and (step, value) points. */
export interface Series {
  name: string;
  color: string;
  points: Array<[number, number]>;
}

const W = 640;
const H = 360;
const PAD = { left: 56, right: 16, top: 28, bottom: 44 };

/** Renders the series into an SVG document string. */
export function renderLinePlot(title: string, series: Series[], axes: { x: string; y: string }): string {
  const pts = series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]);
  const [x0, x1] = niceRange(xs.length ? Math.min(...xs) : 0, xs.length ? Math.max(...xs) : 1);
  const [y0, y1] = niceRange(Math.min(0, ...ys), Math.max(1, ...ys));
  const px = (x: number) => PAD.left + ((x - x0) / (x1 - x0)) * (W - PAD.left - PAD.right);
  const py = (y: number) => H - PAD.bottom - ((y - y0) / (y1 - y0)) * (H - PAD.top - PAD.bottom);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2}" y="16" text-anchor="middle" font-size="13">${esc(title)}</text>`);
  for (const t of ticks(y0, y1)) {
    out.push(`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${f(py(t))}" y2="${f(py(t))}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${PAD.left - 6}" y="${f(py(t) + 4)}" text-anchor="end">${fmt(t)}</text>`);
  }
  for (const t of ticks(x0, x1)) {
    out.push(
      `<line x1="${f(px(t))}" x2="${f(px(t))}" y1="${H - PAD.bottom}" y2="${H - PAD.bottom + 4}" stroke="#333"/>`,
    );
    out.push(`<text x="${f(px(t))}" y="${H - PAD.bottom + 16}" text-anchor="middle">${fmt(t)}</text>`);
  }
  out.push(
    `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${H - PAD.bottom}" y2="${H - PAD.bottom}" stroke="#333"/>`,
  );
  out.push(`<line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${H - PAD.bottom}" stroke="#333"/>`);
  out.push(`<text x="${(PAD.left + W - PAD.right) / 2}" y="${H - 8}" text-anchor="middle">${esc(axes.x)}</text>`);
  out.push(
    `<text transform="translate(14 ${(PAD.top + H - PAD.bottom) / 2}) rotate(-90)" text-anchor="middle">${esc(axes.y)}</text>`,
  );
  series.forEach((s, i) => {
    const good = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (good.length > 1) {
      out.push(
        `<polyline fill="none" stroke="${s.color}" stroke-width="1.8" points="${good.map(([x, y]) => `${f(px(x))},${f(py(y))}`).join(" ")}"/>`,
      );
    }
    if (good.length <= 40)
      for (const [x, y] of good) out.push(`<circle cx="${f(px(x))}" cy="${f(py(y))}" r="2.5" fill="${s.color}"/>`);
    const ly = PAD.top + 6 + i * 15;
    out.push(
      `<line x1="${PAD.left + 10}" x2="${PAD.left + 28}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"/>`,
    );
    out.push(`<text x="${PAD.left + 32}" y="${ly + 4}">${esc(s.name)}</text>`);
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}

/** Widens [lo, hi] to multiples of a nice step; a flat range gets a unit of room. */
function niceRange(lo: number, hi: number): [number, number] {
  if (hi - lo < 1e-12) return [lo - 0.5, hi + 0.5];
  const step = niceStep(hi - lo);
  return [Math.floor(lo / step + 1e-9) * step, Math.ceil(hi / step - 1e-9) * step];
}

function niceStep(span: number): number {
  const raw = span / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const r = raw / mag;
  return (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
}

function ticks(lo: number, hi: number): number[] {
  const step = niceStep(hi - lo);
  const out: number[] = [];
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step)
    out.push(Number(t.toPrecision(12)));
  return out;
}

const f = (x: number) => x.toFixed(1);
const fmt = (x: number) =>
  Math.abs(x) >= 1000 || Number.isInteger(x) ? String(x) : Number(x.toPrecision(3)).toString();
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
