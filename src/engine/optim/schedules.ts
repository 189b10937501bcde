/**
 * Learning-rate schedules as functions of the 0-based step index. Warm-up ramps linearly to the peak so that
 * step 0 already trains (lr * 1/warmupSteps) rather than taking a zero-lr step as some libraries do.
 */
import { ConfigError } from "../../util/errors.js";

/** Learning rate for a 0-based step. */
export type LrSchedule = (step: number) => number;

/** The same rate at every step. */
export function constantLr(lr: number): LrSchedule {
  return () => lr;
}

/** Linear ramp from lr/warmupSteps to lr over warmupSteps steps, then constant. */
export function linearWarmup(lr: number, warmupSteps: number): LrSchedule {
  if (!(warmupSteps >= 0)) throw new ConfigError(`linearWarmup: warmupSteps must be >= 0, got ${warmupSteps}`);
  return (step) => (step < warmupSteps ? (lr * (step + 1)) / warmupSteps : lr);
}

/** Options of cosineLr. */
export interface CosineOptions {
  /** Peak learning rate. */
  lr: number;
  /** Steps of linear warm-up before the decay (default 0). */
  warmupSteps?: number;
  /** Step at which the decay reaches the floor; later steps stay there. */
  totalSteps: number;
  /** Floor the decay ends at (default 0). */
  minLr?: number;
}

/** Linear warm-up, then half a cosine from lr down to minLr at totalSteps (SGDR without restarts). */
export function cosineLr(opts: CosineOptions): LrSchedule {
  const { lr, totalSteps } = opts;
  const warmup = opts.warmupSteps ?? 0;
  const minLr = opts.minLr ?? 0;
  if (!(totalSteps > warmup))
    throw new ConfigError(`cosineLr: totalSteps (${totalSteps}) must exceed warmupSteps (${warmup})`);
  return (step) => {
    if (step < warmup) return (lr * (step + 1)) / warmup;
    const progress = Math.min(1, (step - warmup) / (totalSteps - warmup));
    return minLr + (lr - minLr) * 0.5 * (1 + Math.cos(Math.PI * progress));
  };
}
