/**
 * Whether a speed measurement ran on a quiet machine. On two cores a neighbour skews peer ratios tenfold (PyTorch
 * with 2 threads slows by 10× or more beside another process; issue 21), so a speed bench takes a reading before
 * and after it runs, prints both, and says the run does not count when someone else used the CPUs meanwhile.
 *
 * Two readings, the second only where the first is not available:
 * - **CPU accounting (Linux).** The machine's busy CPU time (/proc/stat: everything but idle and iowait; a
 *   hypervisor's steal counts as busy, since it is a neighbour too) minus the CPU time of this process and every
 *   process below it (the peer runs as a child), over the run's wall time: the cores that others used, on average,
 *   during exactly this run. A run counts when that stays under `OTHERS_LIMIT` cores.
 * - **The 1-minute load average**, printed always and judged only without /proc: a slow, smoothed figure (an
 *   exponential average with a 1-minute time constant). It flagged quiet runs that started right after another
 *   bench (the first run's load was still in the average), which is why the accounting above replaced it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";

/** CPU time counters at one moment, in clock ticks (USER_HZ). */
export interface CpuTicks {
  /** Every CPU's time so far, idle included. */
  total: number;
  /** Every CPU's busy time (total less idle and iowait). */
  busy: number;
  /** User and system time of this process and every process below it, reaped children included. */
  own: number;
}

/** One reading: the 1-minute load average, the machine's logical cores, when, and the CPU counters where known. */
export interface LoadSample {
  load1: number;
  cores: number;
  at: string;
  cpu?: CpuTicks;
}

/** Load above `threads` + this is taken as someone else's work (only where the CPU counters are missing). */
export const LOAD_ALLOWANCE = 0.5;

/** Cores of CPU time that others may use on average during a run that still counts. */
export const OTHERS_LIMIT = 0.2;

/** Busy and total ticks from /proc/stat's first line ("cpu user nice system idle iowait irq softirq steal ..."). */
export function parseProcStat(text: string): { total: number; busy: number } {
  const line = text.split("\n").find((l) => l.startsWith("cpu "));
  if (!line) throw new Error("/proc/stat: no aggregate cpu line");
  // guest and guest_nice (fields 9, 10) are already inside user and nice
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { total, busy: total - f[3]! - (f[4] ?? 0) };
}

/** From /proc/<pid>/stat: the parent's pid and utime + stime + cutime + cstime (fields 4 and 14-17). */
export function parsePidStat(text: string): { ppid: number; ticks: number } {
  // the command name (field 2) is in parentheses and may hold spaces: split after its closing parenthesis
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // rest[0] is field 3 (state), so field n sits at rest[n - 3]
  const ticks = [14, 15, 16, 17].reduce((s, n) => s + Number(rest[n - 3]), 0);
  return { ppid: Number(rest[1]), ticks };
}

/** CPU ticks of `root` and its descendants, from a list of every process's stat line. */
export function treeTicks(stats: ReadonlyMap<number, { ppid: number; ticks: number }>, root: number): number {
  const children = new Map<number, number[]>();
  for (const [pid, s] of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  let sum = 0;
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop()!;
    sum += stats.get(pid)?.ticks ?? 0;
    todo.push(...(children.get(pid) ?? []));
  }
  return sum;
}

/** The CPU counters now, or undefined without a readable /proc. */
function cpuTicks(): CpuTicks | undefined {
  try {
    const machine = parseProcStat(readFileSync("/proc/stat", "utf8"));
    const stats = new Map<number, { ppid: number; ticks: number }>();
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      try {
        stats.set(Number(name), parsePidStat(readFileSync(`/proc/${name}/stat`, "utf8")));
      } catch {
        // the process ended between the listing and the read
      }
    }
    return { ...machine, own: treeTicks(stats, process.pid) };
  } catch {
    return undefined;
  }
}

/** Reads the load average and the CPU counters now. */
export function loadSample(): LoadSample {
  const cpu = cpuTicks();
  return { load1: loadavg()[0]!, cores: cpus().length, at: new Date().toISOString(), ...(cpu ? { cpu } : {}) };
}

/** The verdict on a run that used `threads` threads: whether it counts, and a readable line saying why. */
export interface LoadVerdict {
  counts: boolean;
  line: string;
  /** Cores that other processes used on average during the run, where the CPU counters were read. */
  othersCores?: number;
}

/** Judges a run from the readings before and after it (see the file comment). */
export function loadVerdict(before: LoadSample, after: LoadSample, threads: number): LoadVerdict {
  const figures = `load average ${before.load1.toFixed(2)} before, ${after.load1.toFixed(2)} after; ${threads} threads`;
  if (before.cpu && after.cpu && after.cpu.total > before.cpu.total) {
    const wallTicks = (after.cpu.total - before.cpu.total) / after.cores; // one CPU's ticks over the run
    const others = Math.max(0, after.cpu.busy - before.cpu.busy - (after.cpu.own - before.cpu.own)) / wallTicks;
    const what = `${figures}; other processes used ${others.toFixed(2)} cores on average during the run`;
    return others > OTHERS_LIMIT
      ? {
          counts: false,
          othersCores: others,
          line: `WARNING: ${what}: above ${OTHERS_LIMIT}, so this run does not count`,
        }
      : { counts: true, othersCores: others, line: `${what}: quiet` };
  }
  const limit = threads + LOAD_ALLOWANCE;
  const busy = [before.load1, after.load1].some((l) => l > limit);
  return busy
    ? {
        counts: false,
        line: `WARNING: ${figures}: above ${limit.toFixed(1)}, so something else ran; this run does not count`,
      }
    : { counts: true, line: `${figures}: quiet` };
}
