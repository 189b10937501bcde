/**
 * Reverse-mode automatic differentiation over the graph that ops record on their outputs.
 *
 * `backward(loss)` is a function of this module, not a method of Tensor, so the tensor module does not import
 * autograd and the engine has no import circle (tensor ← ops ← grad-table ← autograd).
 *
 * backward(loss): order the graph topologically from the loss, then walk it in reverse, handing each node's
 * upstream gradient to its op's rule from the exhaustive gradient table. Rules accumulate into per-tensor
 * buffers (a tensor used twice collects both contributions); leaves accumulate into `.grad`, so gradients
 * add up across backward calls until zeroGrad. Intermediate buffers and the graph are dropped as the walk
 * passes them, so memory peaks at the forward activations plus the gradients in flight.
 */
import { backend } from "./backends/index.js";
import { gradRule } from "./grad-table.js";
import { allocZeroed, release } from "./pool.js";
import type { GradRule, OpName } from "./ops/op-set.js";
import type { Tensor } from "./tensor.js";
import { NonFiniteError, ShapeError, fmtShape } from "../util/errors.js";

/** Tensors reachable from `root` through recorded nodes, inputs before the tensors that use them. */
function topoOrder(root: Tensor): Tensor[] {
  const order: Tensor[] = [];
  const seen = new Set<Tensor>([root]);
  // Iterative DFS (graphs of deep models overflow a recursive one): [tensor, next input index].
  const stack: [Tensor, number][] = [[root, 0]];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const [t, i] = top;
    const inputs = t.node ? t.node.inputs : [];
    if (i < inputs.length) {
      top[1] = i + 1;
      const x = inputs[i]!;
      if (x.graphFreed) {
        throw new Error(
          `backward: the graph through a ${t.node!.op} input was freed by an earlier backward(); recompute the forward pass`,
        );
      }
      if (x.requiresGrad && !seen.has(x)) {
        seen.add(x);
        stack.push([x, 0]);
      }
    } else {
      stack.pop();
      order.push(t);
    }
  }
  return order;
}

/** Names the earliest op in the graph whose output holds a NaN/Inf (for NonFiniteError messages). */
export function nonFiniteOrigin(loss: Tensor): string {
  const order: Tensor[] = [];
  const seen = new Set<Tensor>([loss]);
  const stack = [loss];
  while (stack.length > 0) {
    const t = stack.pop()!;
    order.push(t);
    for (const x of t.node?.inputs ?? [])
      if (!seen.has(x)) {
        seen.add(x);
        stack.push(x);
      }
  }
  let origin: Tensor | null = null;
  for (const t of order) {
    if (!t.node) continue;
    const d = t.data;
    let bad = false;
    for (let i = 0; i < d.length && !bad; i++) bad = !Number.isFinite(d[i]!);
    if (bad && t.node.inputs.every((x) => x.data.every(Number.isFinite))) origin = t;
  }
  return origin ? `; first non-finite value in the output of ${origin.node!.op} (${origin.shape.join(", ")})` : "";
}

/** Backpropagates from a one-element loss, accumulating into `.grad` of every leaf that requires a gradient. */
export function backward(loss: Tensor): void {
  if (loss.size !== 1) throw new ShapeError(`backward: loss must have one element, got shape ${fmtShape(loss.shape)}`);
  const v = loss.data[0]!;
  if (!Number.isFinite(v)) throw new NonFiniteError(`backward: loss is ${v}${nonFiniteOrigin(loss)}`);
  if (!loss.requiresGrad) {
    throw new Error(
      "backward: the loss does not depend on anything that requires a gradient (all parameters frozen, or computed under noGrad)",
    );
  }
  runBackward(loss);
}

/** Runs the backward pass from a one-element tensor (validated by `backward`). */
function runBackward(loss: Tensor): void {
  if (loss.graphFreed)
    throw new Error(
      "backward: this loss's graph was already freed by an earlier backward(); recompute the forward pass",
    );
  const order = topoOrder(loss);
  const grads = new Map<Tensor, Float32Array>();
  grads.set(loss, Float32Array.of(1));

  const bufferFor = (t: Tensor): Float32Array => {
    if (!t.node) {
      // Leaf: accumulate straight into .grad.
      if (!t.grad) t.grad = allocZeroed(t.size);
      return t.grad;
    }
    let g = grads.get(t);
    if (!g) {
      g = allocZeroed(t.size);
      grads.set(t, g);
    }
    return g;
  };

  // Adds g (the current node's dy) to x's gradient, taking g over as the buffer when x has none yet (saves a
  // zero-fill and a copy). Either way the current node no longer owns g.
  let handedOver = false;
  const adopt = (x: Tensor, g: Float32Array): void => {
    handedOver = true;
    if (!x.requiresGrad) return release(g);
    const cur = x.node ? grads.get(x) : x.grad;
    if (cur) {
      backend().axpy(1, g, cur);
      release(g);
    } else if (x.node) grads.set(x, g);
    else x.grad = g;
  };

  for (let idx = order.length - 1; idx >= 0; idx--) {
    const t = order[idx]!;
    const node = t.node;
    if (!node) {
      if (t === loss && t.requiresGrad) bufferFor(t)[0]! += 1;
      continue;
    }
    const dy = grads.get(t);
    grads.delete(t);
    if (dy) {
      const inputs = node.inputs;
      const rule = gradRule(node.op) as GradRule<OpName>;
      handedOver = false;
      rule(
        node.ctx,
        dy,
        t,
        inputs,
        (i) => (inputs[i]!.requiresGrad ? bufferFor(inputs[i]!) : null),
        (i, g) => adopt(inputs[i]!, g),
      );
      // dy belonged to this node alone; unless a rule handed it on, it is dead now.
      if (!handedOver) release(dy);
    }
    // Free the graph behind us: this tensor is now a plain value.
    t.node = null;
    t.graphFreed = true;
  }
}
