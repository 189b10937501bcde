/**
 * Optimizer: an update rule (rules.ts) bound to named parameters, with a step counter and checkpointable state.
 * Parameters that are frozen (requiresGrad false) or have no gradient this step are skipped and get no state,
 * so LoRA training keeps moments only for the adapters.
 */
import { CheckpointError, ConfigError } from "../../util/errors.js";
import type { Tensor } from "../tensor.js";
import type { SlotState, UpdateRule } from "./rules.js";

/** Parameters as [name, tensor] pairs (Module.namedParameters()) or a bare list (named "param.<i>"). */
export type ParamList = readonly (readonly [string, Tensor])[] | readonly Tensor[];

/** Normalises a ParamList to named pairs. */
export function namedList(params: ParamList): [string, Tensor][] {
  return params.map((p, i) => (Array.isArray(p) ? [p[0], p[1]] : [`param.${i}`, p as Tensor])) as [string, Tensor][];
}

/** Checkpointable optimiser state: plain numbers and Float32Arrays. */
export interface OptimizerState {
  rule: string;
  step: number;
  /** slots[paramName][slotName] = values. */
  slots: Record<string, SlotState>;
}

/** Options of Optimizer. */
export interface OptimizerOptions {
  /** Which parameters weight decay applies to (default: all, as PyTorch). */
  decay?: (name: string, t: Tensor) => boolean;
}

/** A rule applied to a fixed list of parameters. */
export class Optimizer {
  readonly rule: UpdateRule;
  /** Learning rate used by step() when none is passed (set it from a schedule). */
  lr: number;
  private readonly params: [string, Tensor][];
  private readonly decay: (name: string, t: Tensor) => boolean;
  private slots = new Map<string, SlotState>();
  private stepCount = 0;

  constructor(rule: UpdateRule, params: ParamList, opts: OptimizerOptions = {}) {
    this.rule = rule;
    this.lr = rule.lr;
    this.params = namedList(params);
    this.decay = opts.decay ?? (() => true);
    const names = new Set<string>();
    for (const [name] of this.params) {
      if (names.has(name)) throw new ConfigError(`Optimizer: parameter name "${name}" appears twice`);
      names.add(name);
    }
  }

  /** Steps taken so far. */
  get steps(): number {
    return this.stepCount;
  }

  /** Applies one update to every trainable parameter that has a gradient. */
  step(lr: number = this.lr): void {
    this.stepCount++;
    for (const [name, t] of this.params) {
      if (!t.requiresGrad || !t.grad) continue;
      let s = this.slots.get(name);
      if (!s) {
        s = this.rule.init(t.size);
        this.slots.set(name, s);
      }
      this.rule.update(t.data, t.grad, s, this.stepCount, lr, this.decay(name, t));
    }
  }

  /** Clears every parameter's gradient. */
  zeroGrad(): void {
    for (const [, t] of this.params) t.grad = null;
  }

  /** A snapshot (copies) of the step count and every slot. */
  state(): OptimizerState {
    const slots: Record<string, SlotState> = {};
    for (const [name, s] of this.slots) {
      slots[name] = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v.slice()]));
    }
    return { rule: this.rule.name, step: this.stepCount, slots };
  }

  /** Restores a snapshot from state(); names and sizes must match this optimizer's parameters. */
  loadState(state: OptimizerState): void {
    if (state.rule !== this.rule.name)
      throw new CheckpointError(
        `Optimizer.loadState: state is for "${state.rule}", this optimizer is "${this.rule.name}"`,
      );
    const byName = new Map(this.params);
    const slots = new Map<string, SlotState>();
    for (const [name, s] of Object.entries(state.slots)) {
      const t = byName.get(name);
      if (!t) throw new CheckpointError(`Optimizer.loadState: state has slots for unknown parameter "${name}"`);
      const fresh = this.rule.init(t.size);
      for (const key of Object.keys(fresh)) {
        const v = s[key];
        if (!v || v.length !== t.size) {
          throw new CheckpointError(
            `Optimizer.loadState: slot "${key}" of "${name}" has ${v ? v.length : "no"} values, expected ${t.size}`,
          );
        }
        fresh[key] = Float32Array.from(v);
      }
      slots.set(name, fresh);
    }
    this.slots = slots;
    this.stepCount = state.step;
  }
}
