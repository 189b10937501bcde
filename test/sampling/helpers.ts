/** Shared helpers for sampling tests: full-forward log-probs of a completion. */
import { noGrad } from "../../src/engine/index.js";
import { tokenLogprobs, type Transformer } from "../../src/models/transformer.js";

export { noGrad };

/** log_softmax(logits / T) at each completion token from one forward pass over prompt + completion. */
export function tokenLogprobsFor(
  model: Transformer,
  prompt: number[],
  completion: number[],
  temperature: number,
): number[] {
  const seq = [...prompt, ...completion];
  const targets = new Int32Array(seq.length).fill(-100);
  for (let j = 0; j < completion.length; j++) targets[prompt.length - 1 + j] = completion[j]!;
  const lp = noGrad(() => tokenLogprobs(model.forward(Int32Array.from(seq), 1, seq.length), targets, temperature));
  return completion.map((_, j) => lp.data[prompt.length - 1 + j]!);
}
