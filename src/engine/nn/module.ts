/**
 * Module: a tree of parameters and sub-modules, found by walking the object's own fields (like PyTorch's
 * attribute registration, without a registry): a field holding a Tensor is a parameter, a Module is a child,
 * an array of Modules is a list of children named by index. Fields whose names start with "_" are skipped
 * (use them for buffers, caches and references to modules owned elsewhere). Names join with ".", e.g.
 * "layers.0.attn.qProj.weight"; order is field order, so it is deterministic.
 */
import { Tensor } from "../tensor.js";

/** Base class of every layer. */
export class Module {
  /** Training mode (dropout active); set by train()/eval() over the whole tree. */
  training = true;

  /** Direct children as [name, module] in field order. */
  namedChildren(): [string, Module][] {
    const out: [string, Module][] = [];
    for (const [key, value] of Object.entries(this)) {
      if (key.startsWith("_")) continue;
      if (value instanceof Module) out.push([key, value]);
      else if (Array.isArray(value))
        value.forEach((v, i) => {
          if (v instanceof Module) out.push([`${key}.${i}`, v]);
        });
    }
    return out;
  }

  /** Every module in the tree (this one first) with its dotted path ("" for this one). */
  namedModules(prefix = ""): [string, Module][] {
    const out: [string, Module][] = [[prefix, this]];
    for (const [name, child] of this.namedChildren())
      out.push(...child.namedModules(prefix ? `${prefix}.${name}` : name));
    return out;
  }

  /** Every parameter tensor (frozen ones included) with its dotted name; shared tensors are listed once. */
  namedParameters(): [string, Tensor][] {
    const out: [string, Tensor][] = [];
    const seen = new Set<Tensor>();
    for (const [path, mod] of this.namedModules()) {
      for (const [key, value] of Object.entries(mod)) {
        if (key.startsWith("_") || !(value instanceof Tensor) || seen.has(value)) continue;
        seen.add(value);
        out.push([path ? `${path}.${key}` : key, value]);
      }
    }
    return out;
  }

  /** Every parameter tensor. */
  parameters(): Tensor[] {
    return this.namedParameters().map(([, t]) => t);
  }

  /** Parameters that currently require gradients, with names. */
  trainableParameters(): [string, Tensor][] {
    return this.namedParameters().filter(([, t]) => t.requiresGrad);
  }

  /** Total number of parameter elements (frozen included). */
  numParameters(): number {
    return this.parameters().reduce((s, t) => s + t.size, 0);
  }

  /** Switches the tree to training mode. */
  train(on = true): this {
    for (const [, m] of this.namedModules()) m.training = on;
    return this;
  }

  /** Switches the tree to evaluation mode (dropout off). */
  eval(): this {
    return this.train(false);
  }

  /** Stops gradients for every parameter in the tree. */
  freeze(): this {
    for (const t of this.parameters()) t.requiresGrad = false;
    return this;
  }

  /** Turns gradients back on for every parameter in the tree. */
  unfreeze(): this {
    for (const t of this.parameters()) t.requiresGrad = true;
    return this;
  }

  /** Clears `.grad` of every parameter. */
  zeroGrad(): void {
    for (const t of this.parameters()) t.grad = null;
  }
}
