/**
 * Pure figures of the SIRL seed bench (bench/seeds/sirl.ts): the paper's three-way comparison (partial KL, full KL,
 * no KL), read at one decoding from each arm's held-out solver-correct rates.
 */

/** The solver-correct rate of the three KL arms at `decoding` (the start's best, so all arms are read alike). */
export function threeWay(
  arms: Record<"partial" | "full" | "none", { correct: Record<string, number> }>,
  decoding: string,
): { partial: number; full: number; none: number } {
  const at = (arm: "partial" | "full" | "none") => {
    const v = arms[arm].correct[decoding];
    if (v === undefined || !Number.isFinite(v)) throw new Error(`threeWay: arm ${arm} has no rate at ${decoding}`);
    return v;
  };
  return { partial: at("partial"), full: at("full"), none: at("none") };
}
