/**
 * Optimiser update rules as pure init/update pairs (after optax and jax-js `packages/optax`): `init` makes the
 * per-parameter state, `update` advances parameter and state in place by one step. `Optimizer` (optimizer.ts)
 * composes a rule with a parameter list, a step counter and a learning rate.
 */
import { ConfigError } from "../../util/errors.js";
import { backend } from "../backends/index.js";

/** Per-parameter optimiser state: named slots of the parameter's size (checkpointable as they are). */
export type SlotState = Record<string, Float32Array>;

/** One optimiser: how to make a parameter's state and how to apply one step. */
export interface UpdateRule {
  /** Name for logs and checkpoints ("adamw", "sgd"). */
  readonly name: string;
  /** Base learning rate (schedules override it per step). */
  readonly lr: number;
  /** Fresh state for a parameter of `size` elements. */
  init(size: number): SlotState;
  /** Applies step number `step` (1-based) in place; `decay` is false for parameters exempt from weight decay. */
  update(param: Float32Array, grad: Float32Array, state: SlotState, step: number, lr: number, decay: boolean): void;
}

/** Options of AdamW (defaults as PyTorch's torch.optim.AdamW). */
export interface AdamWOptions {
  lr?: number;
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
}

/**
 * AdamW (Loshchilov & Hutter, "Decoupled Weight Decay Regularization", Alg. 2) with Adam's bias correction:
 * m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= lr (m/(1-b1^t) / (sqrt(v/(1-b2^t)) + eps) + wd p).
 * As in PyTorch, the decay is scaled by lr (the paper's schedule multiplier eta_t is lr/lr0 times lr0 wd).
 */
export function adamw(opts: AdamWOptions = {}): UpdateRule {
  const lr = opts.lr ?? 1e-3;
  const [beta1, beta2] = opts.betas ?? [0.9, 0.999];
  const eps = opts.eps ?? 1e-8;
  const weightDecay = opts.weightDecay ?? 0.01;
  if (!(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1))
    throw new ConfigError(`adamw: betas must be in [0, 1), got [${beta1}, ${beta2}]`);
  if (!(eps > 0)) throw new ConfigError(`adamw: eps must be > 0, got ${eps}`);
  if (!(weightDecay >= 0)) throw new ConfigError(`adamw: weightDecay must be >= 0, got ${weightDecay}`);
  return {
    name: "adamw",
    lr,
    init: (size) => ({ m: new Float32Array(size), v: new Float32Array(size) }),
    update: (param, grad, state, step, stepLr, decay) => {
      backend().adamw(param, grad, state["m"]!, state["v"]!, stepLr, beta1, beta2, eps, decay ? weightDecay : 0, step);
    },
  };
}

/** Options of SGD. */
export interface SgdOptions {
  lr?: number;
  /** Heavy-ball momentum (PyTorch form: buf = mu buf + g; p -= lr buf). */
  momentum?: number;
  /** L2 penalty added to the gradient (coupled, as PyTorch's SGD). */
  weightDecay?: number;
}

/** Stochastic gradient descent with optional momentum and coupled weight decay. */
export function sgd(opts: SgdOptions = {}): UpdateRule {
  const lr = opts.lr ?? 1e-2;
  const momentum = opts.momentum ?? 0;
  const weightDecay = opts.weightDecay ?? 0;
  if (!(momentum >= 0 && momentum < 1)) throw new ConfigError(`sgd: momentum must be in [0, 1), got ${momentum}`);
  return {
    name: "sgd",
    lr,
    init: (size): SlotState => (momentum > 0 ? { momentum: new Float32Array(size) } : {}),
    update: (param, grad, state, step, stepLr, decay) => {
      const k = backend();
      let g = grad;
      if (weightDecay > 0 && decay) {
        g = grad.slice();
        k.axpy(weightDecay, param, g); // g += wd p
      }
      const buf = state["momentum"];
      if (buf) {
        // PyTorch initialises the buffer with the first gradient rather than decaying zeros.
        if (step === 1) buf.set(g);
        else {
          k.affine(buf, momentum, 0, buf);
          k.axpy(1, g, buf);
        }
        g = buf;
      }
      k.axpy(-stepLr, g, param);
    },
  };
}
