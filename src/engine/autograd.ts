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
import { allocZeroed, isEscaped, release } from "./pool.js";
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

/** Options of `backward`. */
export interface BackwardOptions {
  /**
   * Return the storage of the graph's intermediate tensors (the outputs of recorded ops, the loss excepted) to the
   * engine's buffer pool as the walk passes them, for the next forward pass to reuse. The caller promises not to read
   * any intermediate tensor, or a view or detached copy of one, after `backward` returns. A buffer that a leaf, the
   * loss, or a tensor outside the walk (a constant or detached input) also uses is never returned, and one shared by
   * several intermediates only after the walk has passed all of them. Default false: a training step's activations
   * are otherwise fresh arrays for the GC every step.
   */
  releaseIntermediates?: boolean;
}

/** Backpropagates from a one-element loss, accumulating into `.grad` of every leaf that requires a gradient. */
export function backward(loss: Tensor, opts: BackwardOptions = {}): void {
  if (loss.size !== 1) throw new ShapeError(`backward: loss must have one element, got shape ${fmtShape(loss.shape)}`);
  const v = loss.data[0]!;
  if (!Number.isFinite(v)) throw new NonFiniteError(`backward: loss is ${v}${nonFiniteOrigin(loss)}`);
  if (!loss.requiresGrad) {
    throw new Error(
      "backward: the loss does not depend on anything that requires a gradient (all parameters frozen, or computed under noGrad)",
    );
  }
  runBackward(loss, opts.releaseIntermediates ?? false);
}

/** Runs the backward pass from a one-element tensor (validated by `backward`). */
function runBackward(loss: Tensor, releaseIntermediates: boolean): void {
  if (loss.graphFreed)
    throw new Error(
      "backward: this loss's graph was already freed by an earlier backward(); recompute the forward pass",
    );
  const order = topoOrder(loss);
  const passed = releaseIntermediates ? intermediateReleaser(order, loss) : null;
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
    passed?.(t);
  }
}

/**
 * For `releaseIntermediates`: a callback for each intermediate tensor the walk has passed, which returns a buffer to
 * the pool once every intermediate using it has been passed. By then no rule still to run reads it: a rule reads its
 * node's inputs and output, and every consumer of a tensor comes after it in `order`, so it is walked first.
 */
function intermediateReleaser(order: readonly Tensor[], loss: Tensor): (t: Tensor) => void {
  const kept = new Set<ArrayBufferLike>([loss.data.buffer]);
  const users = new Map<ArrayBufferLike, number>();
  const whole = new Map<ArrayBufferLike, Float32Array>();
  for (const t of order) {
    const buf = t.data.buffer;
    if (!t.node) {
      kept.add(buf); // a leaf: a parameter or an input the caller owns
      continue;
    }
    for (const x of t.node.inputs) if (!x.requiresGrad) kept.add(x.data.buffer); // outside the walk
    // Arrays a rule saved besides its inputs (where's condition) may belong to a tensor the walk passes earlier.
    for (const v of Object.values(t.node.ctx as object)) if (ArrayBuffer.isView(v)) kept.add(v.buffer);
    users.set(buf, (users.get(buf) ?? 0) + 1);
    if (t.data.byteOffset === 0 && t.data.byteLength === buf.byteLength) whole.set(buf, t.data);
  }
  return (t) => {
    const buf = t.data.buffer;
    const left = (users.get(buf) ?? 0) - 1;
    users.set(buf, left);
    const all = whole.get(buf);
    if (left === 0 && all && !kept.has(buf) && !isEscaped(buf)) release(all);
  };
}
