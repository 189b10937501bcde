/**
 * The figures of the RobotxR1 seed system, as pure functions of the jobs' results (tested in
 * test/bench/seeds-robotxr1.test.ts): the success gain of RL and of the shuffled-reward control over the SFT start at
 * the start's best decoding (bench/harness `gainOverBest`), the drop of the trained policy's success when its
 * weights go through the GGUF export's Q8_0 and F16, and the audit that the evaluation is on held-out paraphrases of
 * a track no training prompt names.
 */
import { gainOverBest } from "../../harness/index.js";
import { getTask } from "../../../src/tasks/index.js";
import { CAR_PARAPHRASES } from "../../../src/tasks/mpc-car-paraphrases.js";
import type { RobotJobResult } from "./robotxr1-job.js";

/** One seed's figures (success as a fraction; gains in fraction points). */
export interface RobotSeedFigures {
  seed: number;
  /** The start's best decoding and its success there. */
  decoding: string;
  startSuccess: number;
  rlSuccess: number;
  /** RL's and the control's success minus the start's, at the start's best decoding. */
  successGain: number;
  controlGain: number;
  /** RL's best minus the start's best (each at its own best decoding). */
  bestVsBest: number;
  /** Trained success minus its success after a Q8_0 / F16 round trip, at the same decoding (positive: a loss). */
  q8Drop: number;
  f16Drop: number;
}

/** The figures of one seed from its RL and control jobs; throws when they did not start from the same weights. */
export function seedFigures(rl: RobotJobResult, control: RobotJobResult): RobotSeedFigures {
  if (!rl.start || !rl.final || !rl.quantized || !control.final)
    throw new Error(`robotxr1 seed ${rl.seed}: a job result lacks its evaluations`);
  if (rl.startHash !== control.startHash)
    throw new Error(`robotxr1 seed ${rl.seed}: RL and control began from different starts (the SFT is not seeded)`);
  const g = gainOverBest(rl.start, rl.final);
  const c = gainOverBest(rl.start, control.final);
  const q = rl.quantized;
  if (q.decoding !== g.decoding)
    throw new Error(`robotxr1 seed ${rl.seed}: quantised at ${q.decoding}, but the start's best is ${g.decoding}`);
  const rlSuccess = rl.final[g.decoding]!;
  return {
    seed: rl.seed,
    decoding: g.decoding,
    startSuccess: rl.start[g.decoding]!,
    rlSuccess,
    successGain: g.atStartBest,
    controlGain: c.atStartBest,
    bestVsBest: g.bestVsBest,
    q8Drop: rlSuccess - q.q8_0,
    f16Drop: rlSuccess - q.f16,
  };
}

/** What the split audit found. */
export interface SplitAudit {
  trainTracks: string[];
  testTracks: string[];
  /** Distinct instructions (the prompt's `Instruction:` line) in each split, and how many both share. */
  trainInstructions: number;
  testInstructions: number;
  shared: number;
  /** Centreline paraphrases the test split asks (each behaviour has as many). */
  heldOutPerBehaviour: number;
}

const INSTRUCTION = /^Instruction: (.*)$/m;
const TRACK = /(circular|F-shaped) track/;

/** Generates both splits of mpc-car with `options` and checks what the evaluation claims: unseen paraphrases, unseen track. */
export function auditSplits(options: Record<string, unknown>, trainExamples: number, testExamples: number): SplitAudit {
  const task = getTask("mpc-car", options);
  const read = (split: "train" | "test", n: number) => {
    const exs = task.generate(split, n, 0);
    const instructions = new Set(exs.map((e) => INSTRUCTION.exec(e.prompt)?.[1] ?? ""));
    const tracks = new Set(exs.map((e) => TRACK.exec(e.prompt)?.[1] ?? "?"));
    return { instructions, tracks: [...tracks].sort() };
  };
  const tr = read("train", trainExamples);
  const te = read("test", testExamples);
  return {
    trainTracks: tr.tracks,
    testTracks: te.tracks,
    trainInstructions: tr.instructions.size,
    testInstructions: te.instructions.size,
    shared: [...te.instructions].filter((i) => tr.instructions.has(i)).length,
    heldOutPerBehaviour: CAR_PARAPHRASES.centerline.filter((p) => te.instructions.has(p)).length,
  };
}
