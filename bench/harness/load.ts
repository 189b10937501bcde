/**
 * Whether a speed measurement ran on a quiet machine. On two cores a neighbour skews peer ratios tenfold (PyTorch
 * with 2 threads slows by 10× or more beside another process; issue 21), so a speed bench reads the 1-minute load
 * average before and after it runs, prints both, and says the run does not count when either exceeds the threads the
 * bench itself uses (plus a small allowance for the bench's own helper threads).
 *
 * The load average is a slow, smoothed figure (Linux: an exponential average with a 1-minute time constant), so
 * `before` catches a neighbour that was already running and `after` one that ran for a good part of the bench; a
 * burst of a few seconds can slip through. It is a guard against the usual mistake (a test suite or a second bench
 * beside this one), not a proof of quiet.
 */
import { cpus, loadavg } from "node:os";

/** One reading: the 1-minute load average, the machine's logical cores, and when. */
export interface LoadSample {
  load1: number;
  cores: number;
  at: string;
}

/** Load above `threads` + this is taken as someone else's work (the bench's own GC and I/O threads add a little). */
export const LOAD_ALLOWANCE = 0.5;

/** Reads the load average now. */
export function loadSample(): LoadSample {
  return { load1: loadavg()[0]!, cores: cpus().length, at: new Date().toISOString() };
}

/** The verdict on a run that used `threads` threads: whether it counts, and a readable line saying why. */
export interface LoadVerdict {
  counts: boolean;
  line: string;
}

/** Judges a run from the load before and after it (see the file comment). */
export function loadVerdict(before: LoadSample, after: LoadSample, threads: number): LoadVerdict {
  const limit = threads + LOAD_ALLOWANCE;
  const busy = [before.load1, after.load1].some((l) => l > limit);
  const figures = `load average ${before.load1.toFixed(2)} before, ${after.load1.toFixed(2)} after; ${threads} threads`;
  return busy
    ? {
        counts: false,
        line: `WARNING: ${figures}: above ${limit.toFixed(1)}, so something else ran; this run does not count`,
      }
    : { counts: true, line: `${figures}: quiet` };
}
