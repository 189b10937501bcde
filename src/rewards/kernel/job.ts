/** The kernel evaluation that runs inside a pool worker (one at a time per machine: the "timing" lock). */
import { BASELINES } from "./baselines.js";
import { evaluateKernel, type HarnessOptions } from "./harness.js";
import { v8Backend } from "./js-backend.js";
import type { KernelEvaluation, MatmulShape } from "./types.js";

/** Arguments of one evaluation job. */
export interface KernelJobArgs {
  source: string;
  shape: MatmulShape;
  baseline: string;
  harness: Partial<HarnessOptions> & Pick<HarnessOptions, "profile" | "seed">;
}

/** Evaluates one kernel on the V8 backend. */
export function evaluateKernelJob(args: KernelJobArgs): KernelEvaluation {
  const baseline = BASELINES[args.baseline];
  if (!baseline) throw new Error(`unknown baseline kernel "${args.baseline}"; known: ${Object.keys(BASELINES).join(", ")}`);
  return evaluateKernel(v8Backend, args.source, baseline, args.shape, args.harness);
}
