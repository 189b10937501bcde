/**
 * `npm run bench:car` (or `npx tsx bench/car.ts`): speed of the simulated MPC car on one core. Drives full
 * evaluation runs (5 s settle + 20 s recorded, plant at 100 Hz, MPC QP at 20 Hz) with the default and the gold
 * parameters on both tracks, after one warm-up run, and reports laps/s, ms per lap and evaluations/s.
 * `benchCarLaps()` is exported for bench/exec.ts.
 */
import {
  DEFAULT_PARAMS,
  getTrack,
  runLap,
  TRACK_NAMES,
  type MpcParams,
  type TrackName,
} from "../src/rewards/car/index.js";
import { goldParams } from "../src/tasks/mpc-car.js";

/** One JSON line of the bench format. */
export interface BenchLine {
  bench: string;
  metric: string;
  value: number;
  unit: string;
}

/** Runs the car benchmark; prints JSON lines and readable lines (unless `quiet`) and returns the JSON lines. */
export function benchCarLaps(opts: { runs?: number; quiet?: boolean } = {}): BenchLine[] {
  const runs = opts.runs ?? 3;
  const lines: BenchLine[] = [];
  const emit = (metric: string, value: number, unit: string) => {
    const l = { bench: "car", metric, value: Number(value.toPrecision(4)), unit };
    lines.push(l);
    if (!opts.quiet) console.log(JSON.stringify(l));
  };
  let allLaps = 0;
  let allMs = 0;
  for (const name of TRACK_NAMES) {
    const track = getTrack(name as TrackName);
    const sets: MpcParams[] = [
      { ...DEFAULT_PARAMS },
      { ...DEFAULT_PARAMS, ...goldParams({ kind: "racingLine" }, name) },
    ];
    runLap(track, sets[0]!); // warm-up (JIT)
    let laps = 0;
    let ms = 0;
    let count = 0;
    let qpIters = 0;
    let steps = 0;
    let cpuMs = 0;
    for (let r = 0; r < runs; r++) {
      for (const p of sets) {
        const t0 = performance.now();
        const c0 = process.cpuUsage();
        const res = runLap(track, p);
        ms += performance.now() - t0;
        const c1 = process.cpuUsage(c0);
        cpuMs += (c1.user + c1.system) / 1000;
        laps += Math.abs(res.totalProgress) / track.length;
        qpIters += res.qpIterations;
        steps += res.controlSteps;
        count++;
      }
    }
    allLaps += laps;
    allMs += ms;
    emit(`car.${name}.laps_per_s`, laps / (ms / 1000), "laps/s");
    emit(`car.${name}.ms_per_lap`, ms / laps, "ms");
    emit(`car.${name}.evals_per_s`, count / (ms / 1000), "evals/s");
    // CPU time of this process: the single-core cost even when other processes share the machine.
    emit(`car.${name}.cpu_ms_per_lap`, cpuMs / laps, "ms");
    if (!opts.quiet) {
      console.log(
        `car ${name}: ${(ms / laps).toFixed(1)} ms per lap wall, ${(cpuMs / laps).toFixed(1)} ms CPU (lap ${track.length.toFixed(1)} m), ${(laps / (ms / 1000)).toFixed(2)} laps/s, ` +
          `${(ms / count).toFixed(0)} ms per 25 s evaluation, ${(qpIters / steps).toFixed(1)} QP iterations per MPC step`,
      );
    }
  }
  emit("car.laps_per_s", allLaps / (allMs / 1000), "laps/s");
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) benchCarLaps();
