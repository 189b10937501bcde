/**
 * SVG plot of a track (walls, centreline, racing line) with recorded car trajectories drawn over it, for
 * `rlvr car-plot`. Pure string output: no DOM, no files.
 */
import type { Trajectory } from "./simulate.js";
import { toCartesian, type Track } from "./track.js";

/** One trajectory to draw. */
export interface PlotSeries {
  label: string;
  color: string;
  trajectory: Trajectory;
  /** Drawn dashed (e.g. a crashed run). */
  dashed?: boolean;
}

function path(
  xs: ArrayLike<number>,
  ys: ArrayLike<number>,
  tx: (x: number) => number,
  ty: (y: number) => number,
  close: boolean,
): string {
  const parts: string[] = [];
  for (let i = 0; i < xs.length; i++)
    parts.push(`${i === 0 ? "M" : "L"}${tx(xs[i]!).toFixed(1)},${ty(ys[i]!).toFixed(1)}`);
  return parts.join(" ") + (close ? " Z" : "");
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!);
}

/** Renders `track` and `series` as a standalone SVG document (`size` px wide, aspect kept). */
export function plotTrajectories(
  track: Track,
  series: PlotSeries[],
  opts: { size?: number; title?: string } = {},
): string {
  const size = opts.size ?? 800;
  const xs = [...track.leftWall.x, ...track.rightWall.x];
  const ys = [...track.leftWall.y, ...track.rightWall.y];
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const pad = 0.06 * Math.max(x1 - x0, y1 - y0);
  const scale = size / (x1 - x0 + 2 * pad);
  const height = Math.round((y1 - y0 + 2 * pad) * scale) + 50 + 18 * (series.length + 2);
  const tx = (x: number) => (x - x0 + pad) * scale;
  const ty = (y: number) => (y1 - y + pad) * scale + 40; // SVG y grows downwards
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${height}" viewBox="0 0 ${size} ${height}">`,
  );
  out.push(`<rect width="100%" height="100%" fill="white"/>`);
  out.push(
    `<text x="10" y="24" font-family="sans-serif" font-size="16">${escapeXml(opts.title ?? `track ${track.name}`)}</text>`,
  );
  out.push(
    `<path d="${path(track.leftWall.x, track.leftWall.y, tx, ty, true)}" fill="none" stroke="black" stroke-width="2"/>`,
  );
  out.push(
    `<path d="${path(track.rightWall.x, track.rightWall.y, tx, ty, true)}" fill="none" stroke="black" stroke-width="2"/>`,
  );
  out.push(
    `<path d="${path(track.centre.x, track.centre.y, tx, ty, true)}" fill="none" stroke="#999" stroke-width="1" stroke-dasharray="6 4"/>`,
  );
  out.push(`<path d="${path(track.x, track.y, tx, ty, true)}" fill="none" stroke="#2ca02c" stroke-width="1"/>`);
  for (const s of series) {
    const t = s.trajectory;
    const px = new Float64Array(t.s.length);
    const py = new Float64Array(t.s.length);
    for (let i = 0; i < t.s.length; i++) [px[i], py[i]] = toCartesian(track, t.s[i]!, t.n[i]!);
    const dash = s.dashed ? ` stroke-dasharray="4 3"` : "";
    out.push(
      `<path d="${path(px, py, tx, ty, false)}" fill="none" stroke="${s.color}" stroke-width="1.5" opacity="0.85"${dash}/>`,
    );
  }
  const legend: [string, string][] = [
    ["#999", "centreline"],
    ["#2ca02c", "racing line"],
    ...series.map((s) => [s.color, s.label] as [string, string]),
  ];
  legend.forEach(([color, label], i) => {
    const y = height - 18 * (legend.length - i) + 6;
    out.push(`<line x1="10" y1="${y - 4}" x2="34" y2="${y - 4}" stroke="${color}" stroke-width="3"/>`);
    out.push(`<text x="40" y="${y}" font-family="sans-serif" font-size="13">${escapeXml(label)}</text>`);
  });
  out.push(`</svg>`);
  return out.join("\n");
}
