/**
 * DAPO's soft overlong punishment as one formula (DAPO, arXiv 2503.14476, eq. 13). It lives in util because two
 * layers need the same numbers and neither may import the other: the "overlong" reward checker (src/rewards, usable
 * from any trainer) and the algorithm's reward shaping (src/algorithms). Both call this function.
 */

/** Lengths of the ramp in tokens: L_max (`maxLen`), L_c (`cache`), and a scale (`factor`, default 1). */
export interface OverlongRamp {
  maxLen: number;
  cache: number;
  factor?: number;
}

/** 0 up to L_max − L_c, then linear to −factor at L_max, −factor beyond; L_c = 0 is a hard cut-off. */
export function overlongRamp(length: number, o: OverlongRamp): number {
  const factor = o.factor ?? 1;
  const start = o.maxLen - o.cache;
  if (length <= start) return 0;
  if (length > o.maxLen || o.cache === 0) return -factor;
  return ((start - length) / o.cache) * factor;
}
