/**
 * The kernel evaluation that runs inside a pool worker (one at a time per machine: the "timing" lock). A `wat`
 * kernel is compiled here (wat.ts) and runs as trusted glue around its module, with WebAssembly granted.
 */
import { BASELINES } from "./baselines.js";
import { evaluateKernel, type HarnessOptions } from "./harness.js";
import { v8Backend } from "./js-backend.js";
import type { KernelEvaluation, MatmulShape } from "./types.js";
import { compileWat, watGlueSource } from "./wat.js";

/** Arguments of one evaluation job. */
export interface KernelJobArgs {
  source: string;
  shape: MatmulShape;
  baseline: string;
  harness: Partial<HarnessOptions> & Pick<HarnessOptions, "profile" | "seed">;
  /** Kernel language: JavaScript source, or WebAssembly text. */
  language?: "js" | "wat";
}

/** Evaluates one kernel on the V8 backend. */
export async function evaluateKernelJob(args: KernelJobArgs): Promise<KernelEvaluation> {
  const baseline = BASELINES[args.baseline];
  if (!baseline)
    throw new Error(`unknown baseline kernel "${args.baseline}"; known: ${Object.keys(BASELINES).join(", ")}`);
  if (args.language !== "wat") return evaluateKernel(v8Backend, args.source, baseline, args.shape, args.harness);
  let glue: string;
  try {
    glue = watGlueSource(await compileWat(args.source));
  } catch (err) {
    return {
      correct: false,
      speedup: null,
      ci95: null,
      checks: [{ name: "load", ok: false, detail: `wat: ${err instanceof Error ? err.message : String(err)}` }],
      iterations: 0,
      verifiedCalls: 0,
      significance: null,
      seed: args.harness.seed,
      baselineMedianMs: null,
      candidateMedianMs: null,
      overheadMs: null,
      suspicious: false,
      suspiciousReasons: [],
      machine: v8Backend.describe(),
    };
  }
  return evaluateKernel(v8Backend, glue, baseline, args.shape, { ...args.harness, allowWasm: true });
}
