/**
 * LoRA (Hu et al., "LoRA: Low-Rank Adaptation of Large Language Models", 2021): y = x W^T + b + (alpha/r) *
 * dropout(x) A^T B^T, with A (r, in) and B (out, r). Only A and B train; B starts at zero so the wrapped layer
 * starts out equal to the base (Sec. 4.1). A uses PyTorch's Linear init U(-1/sqrt(in), 1/sqrt(in)), as PEFT's
 * kaiming_uniform(a = sqrt(5)) does. `merge()` folds (alpha/r) B A into W for export.
 */
import { ConfigError } from "../../util/errors.js";
import type { Rng } from "../../util/rng.js";
import { add, mul } from "../ops/elementwise.js";
import { matmul } from "../ops/matmul.js";
import { dropout } from "../ops/nn.js";
import { Tensor, noGrad, randUniform, zeros } from "../tensor.js";
import { Linear } from "./linear.js";
import { Module } from "./module.js";

/** Options of a LoRA adapter. */
export interface LoRAOptions {
  /** Rank r of the update. */
  rank: number;
  /** Scale numerator: the update is multiplied by alpha / rank (default: rank, i.e. scale 1). */
  alpha?: number;
  /** Dropout on the adapter's input (default 0). */
  dropout?: number;
  /** Seeded stream for A's init and the dropout masks. */
  rng: Rng;
}

/** A Linear with a trainable low-rank update; the base weight and bias are frozen. */
export class LoRALinear extends Linear {
  loraA: Tensor;
  loraB: Tensor;
  readonly rank: number;
  readonly alpha: number;
  readonly dropoutP: number;
  private readonly _rng: Rng;

  constructor(base: Linear, opts: LoRAOptions) {
    super(base.inFeatures, base.outFeatures, { weight: base.weight, bias: base.bias });
    if (!(Number.isInteger(opts.rank) && opts.rank > 0))
      throw new ConfigError(`LoRA: rank must be a positive integer, got ${opts.rank}`);
    this.rank = opts.rank;
    this.alpha = opts.alpha ?? opts.rank;
    this.dropoutP = opts.dropout ?? 0;
    this._rng = opts.rng;
    this.weight.requiresGrad = false;
    if (this.bias) this.bias.requiresGrad = false;
    const bound = 1 / Math.sqrt(this.inFeatures);
    this.loraA = randUniform([this.rank, this.inFeatures], opts.rng, -bound, bound);
    this.loraA.requiresGrad = true;
    this.loraB = zeros([this.outFeatures, this.rank]);
    this.loraB.requiresGrad = true;
  }

  /** alpha / rank. */
  get scaling(): number {
    return this.alpha / this.rank;
  }

  /** x (..., in) → (..., out). */
  override forward(x: Tensor): Tensor {
    const base = super.forward(x);
    const h = dropout(x, this.dropoutP, this._rng, this.training);
    // (..., in) → (..., r) → (..., out)
    const update = matmul(matmul(h, this.loraA, { transB: true }), this.loraB, { transB: true });
    return add(base, mul(update, this.scaling));
  }

  /** A plain Linear whose weight is W + (alpha/r) B A (new tensors; this layer is unchanged). */
  merge(): Linear {
    return noGrad(() => {
      const delta = mul(matmul(this.loraB, this.loraA), this.scaling); // (out, in)
      const w = add(this.weight, delta);
      const weight = new Tensor(w.data, w.shape, true);
      const bias = this.bias ? new Tensor(this.bias.data.slice(), this.bias.shape, true) : null;
      return new Linear(this.inFeatures, this.outFeatures, { weight, bias });
    });
  }
}

/** Options of applyLoRA. */
export interface ApplyLoRAOptions extends LoRAOptions {
  /** Which Linear layers get adapters: a RegExp tested on the dotted path, or names matching a path's last segment or the whole path. */
  targets: RegExp | readonly string[];
}

/** Calls `visit` for every Linear held in a field (or array element) of any module in the tree. */
function forEachLinearSlot(
  root: Module,
  visit: (path: string, lin: Linear, replace: (m: Module) => void) => void,
): void {
  for (const [prefix, mod] of root.namedModules()) {
    const holder = mod as unknown as Record<string, unknown>;
    for (const [key, value] of Object.entries(mod)) {
      if (key.startsWith("_")) continue;
      const path = prefix ? `${prefix}.${key}` : key;
      if (value instanceof Linear) visit(path, value, (m) => (holder[key] = m));
      else if (Array.isArray(value)) {
        value.forEach((v, i) => {
          if (v instanceof Linear) visit(`${path}.${i}`, v, (m) => (value[i] = m));
        });
      }
    }
  }
}

function matches(targets: RegExp | readonly string[], path: string): boolean {
  if (targets instanceof RegExp) return targets.test(path);
  const last = path.slice(path.lastIndexOf(".") + 1);
  return targets.includes(path) || targets.includes(last);
}

/**
 * Freezes every parameter of `module` and wraps each targeted Linear in a LoRALinear (in place). Returns the
 * wrapped paths; throws ConfigError when nothing matched, since a typo would otherwise train nothing.
 */
export function applyLoRA(module: Module, opts: ApplyLoRAOptions): string[] {
  module.freeze();
  const wrapped: string[] = [];
  forEachLinearSlot(module, (path, lin, replace) => {
    if (lin instanceof LoRALinear || !matches(opts.targets, path)) return;
    replace(new LoRALinear(lin, { ...opts, rng: opts.rng.split(path) }));
    wrapped.push(path);
  });
  if (wrapped.length === 0) throw new ConfigError(`applyLoRA: targets ${String(opts.targets)} matched no Linear layer`);
  return wrapped;
}

/** Replaces every LoRALinear in the tree by its merged Linear (in place); returns the merged paths. */
export function mergeLoRA(module: Module): string[] {
  const merged: string[] = [];
  forEachLinearSlot(module, (path, lin, replace) => {
    if (!(lin instanceof LoRALinear)) return;
    replace(lin.merge());
    merged.push(path);
  });
  return merged;
}
