/** Global-norm gradient clipping (as torch.nn.utils.clip_grad_norm_). */
import { NonFiniteError, fmtShape } from "../../util/errors.js";
import { backend } from "../backends/index.js";
import { namedList, type ParamList } from "./optimizer.js";

/**
 * Scales every gradient by maxNorm / (norm + 1e-6) when the global L2 norm exceeds maxNorm; returns the norm
 * before clipping. A NaN/Inf norm throws NonFiniteError naming the first parameter with a non-finite gradient.
 */
export function clipGradNorm(params: ParamList, maxNorm: number): number {
  const k = backend();
  const named = namedList(params);
  let total = 0;
  for (const [name, t] of named) {
    if (!t.grad) continue;
    const s = k.sumSquares(t.grad);
    if (!Number.isFinite(s))
      throw new NonFiniteError(
        `clipGradNorm: gradient of "${name}" ${fmtShape(t.shape)} is not finite (sum of squares ${s})`,
      );
    total += s;
  }
  const norm = Math.sqrt(total);
  if (!Number.isFinite(norm)) throw new NonFiniteError(`clipGradNorm: global gradient norm overflowed (${norm})`);
  if (norm > maxNorm) {
    const scale = maxNorm / (norm + 1e-6);
    for (const [, t] of named) if (t.grad) k.affine(t.grad, scale, 0, t.grad);
  }
  return norm;
}
