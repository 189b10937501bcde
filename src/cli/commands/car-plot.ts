/**
 * `rlvr car-plot --out lap.svg [--track F] [--case racingLine] [--params FILE]`: drives the simulated MPC car with the
 * default parameters and with tuned ones (the task's gold for the case, or a file), prints each run's metric and
 * writes an SVG of both trajectories over the track.
 */
import type { Command } from "commander";
import { readFileSync, writeFileSync } from "node:fs";
import {
  DEFAULT_PARAMS,
  TRACK_NAMES,
  evaluateParams,
  getTrack,
  parseCase,
  plotTrajectories,
  readParams,
  validateParams,
  type MpcParams,
  type RawValue,
  type TrackName,
} from "../../rewards/car/index.js";
import { goldParams } from "../../tasks/mpc-car.js";

/** Reads a parameter file: a JSON object of numbers, or a completion containing `new_mpc_params = {...}`. */
export function readParamFile(path: string): MpcParams {
  const text = readFileSync(path, "utf8");
  let values: Partial<Record<keyof MpcParams, RawValue>>;
  try {
    const obj = JSON.parse(text) as Record<string, unknown>;
    if (typeof obj !== "object" || obj === null || Array.isArray(obj)) throw new Error("not an object");
    values = Object.fromEntries(
      Object.entries(obj).map(([k, v]) => [
        k,
        typeof v === "number" ? { kind: "number", value: v } : { kind: "string", value: String(v) },
      ]),
    );
  } catch {
    const parsed = readParams(text.includes("<answer>") ? text : `<answer>${text}</answer>`);
    if (!parsed.extracted)
      throw new Error(`${path}: neither a JSON object nor a new_mpc_params = {...} dict (${parsed.error})`);
    values = parsed.values;
  }
  const v = validateParams(values, "reject");
  if (!v.ok) throw new Error(`${path}: ${v.reason}`);
  return v.params;
}

/** Registers `car-plot`. */
export function register(program: Command): void {
  program
    .command("car-plot")
    .description("plot the simulated MPC car's lap trajectories for default and tuned parameters as SVG")
    .option("--out <file>", "SVG file to write", "lap.svg")
    .option("--track <name>", `track: ${TRACK_NAMES.join(" | ")}`, "F")
    .option("--case <case>", "behaviour: centerline | racingLine | reverse | refVelocity(v) | smooth", "centerline")
    .option("--params <file>", "tuned parameters (JSON object or a completion); default: the task's gold for the case")
    .action((o: { out: string; track: string; case: string; params?: string }) => {
      try {
        if (!TRACK_NAMES.includes(o.track as TrackName))
          throw new Error(`--track must be one of ${TRACK_NAMES.join(", ")}, got "${o.track}"`);
        const track = o.track as TrackName;
        const c = parseCase(o.case);
        if (!c)
          throw new Error(
            `--case "${o.case}" is not a behaviour (centerline, racingLine, reverse, refVelocity(2.5), smooth)`,
          );
        const tuned: MpcParams = o.params ? readParamFile(o.params) : { ...DEFAULT_PARAMS, ...goldParams(c, track) };
        const base = evaluateParams(c, track, { ...DEFAULT_PARAMS });
        const mine = evaluateParams(c, track, tuned);
        const describe = (label: string, e: typeof base) =>
          `${label}: ${e.metric === null ? `crashed (${e.crashReason})` : `RMSE ${e.metric.toFixed(4)}${e.stalled ? " (stalled)" : ""}`}, mean progress ${e.meanProgressSpeed.toFixed(2)} m/s`;
        console.log(describe("default", base));
        console.log(describe("tuned  ", mine));
        if (base.metric !== null && mine.metric !== null && !mine.stalled)
          console.log(`improvement ${((base.metric - mine.metric) / base.metric).toFixed(3)}`);
        const svg = plotTrajectories(
          getTrack(track),
          [
            { label: "default parameters", color: "#1f77b4", trajectory: base.run.trajectory, dashed: base.crashed },
            {
              label: `tuned parameters (${o.params ?? "gold"})`,
              color: "#d62728",
              trajectory: mine.run.trajectory,
              dashed: mine.crashed,
            },
          ],
          { title: `MPC car, track ${track}, case ${o.case}` },
        );
        writeFileSync(o.out, svg);
        console.log(`wrote ${o.out}`);
      } catch (err) {
        console.error(`rlvr car-plot: ${err instanceof Error ? err.message : String(err)}`);
        process.exitCode = 1;
      }
    });
}
