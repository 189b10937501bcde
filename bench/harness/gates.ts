/**
 * The pass/fail logic and summary statistics of an effect bench. The gate is comparative and per seed: on every
 * seed, the RL arm's gain (at the start's best decoding) minus the control's gain must reach the target. A
 * control that collapses therefore cannot make a weak RL arm pass; its own change is reported beside the gate.
 */

/** Mean, sample standard deviation (n − 1; 0 for one value) and minimum. */
export function summarize(xs: readonly number[]): { mean: number; std: number; min: number; n: number } {
  if (xs.length === 0) throw new Error("summarize: no values");
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const ss = xs.reduce((s, x) => s + (x - mean) ** 2, 0);
  return { mean, std: xs.length > 1 ? Math.sqrt(ss / (xs.length - 1)) : 0, min: Math.min(...xs), n: xs.length };
}

/** One seed's gains over the start, all at the start's best decoding. */
export interface SeedGains {
  seed: number;
  rl: number;
  control: number;
  /** The compute-matched SFT arm (continued SFT for RL's wall-clock time), when run. */
  sftMore?: number;
}

/** The verdict of the comparative gate. */
export interface GateVerdict {
  pass: boolean;
  /** RL gain minus control gain, per seed. */
  margins: number[];
  /** Seeds whose margin is below the target (or whose RL gain is below `minGain`). */
  failedSeeds: number[];
  /** Which arm gained more on average: RL or the compute-matched SFT arm (null when that arm was not run). */
  winnerVsSft: "rl" | "sft" | "tie" | null;
}

/**
 * PASS when RL gain − control gain ≥ target on every seed. With `minGain`, the RL arm's own gain over the start must
 * also reach it on every seed: for claims of the form "rises by ≥ X over the start", which a control that collapses
 * under a high learning rate would otherwise let a small gain pass.
 */
export function comparativeGate(
  seeds: readonly SeedGains[],
  target: number,
  options: { minGain?: number } = {},
): GateVerdict {
  if (seeds.length === 0) throw new Error("comparativeGate: no seeds");
  const margins = seeds.map((s) => s.rl - s.control);
  const minGain = options.minGain ?? -Infinity;
  const failedSeeds = seeds.filter((s, i) => !(margins[i]! >= target && s.rl >= minGain)).map((s) => s.seed);
  let winnerVsSft: GateVerdict["winnerVsSft"] = null;
  if (seeds.every((s) => s.sftMore !== undefined)) {
    const d = summarize(seeds.map((s) => s.rl - s.sftMore!)).mean;
    winnerVsSft = Math.abs(d) < 1e-9 ? "tie" : d > 0 ? "rl" : "sft";
  }
  return { pass: failedSeeds.length === 0, margins, failedSeeds, winnerVsSft };
}

/** A bench's JSON line: {"bench","metric","value","unit"} plus the peer fields when there is a peer. */
export function benchLine(
  bench: string,
  metric: string,
  value: number,
  unit: string,
  peer?: { name: string; value: number },
): string {
  const round = (x: number) => +x.toFixed(4);
  const base = { bench, metric, value: round(value), unit };
  if (!peer) return JSON.stringify(base);
  const ratio = peer.value === 0 ? null : round(value / peer.value);
  return JSON.stringify({ ...base, peer: peer.name, peerValue: round(peer.value), ratio });
}
