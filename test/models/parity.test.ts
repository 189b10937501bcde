/**
 * Parity with PyTorch/transformers: the tiny Llama and Qwen2 checkpoints in test/fixtures/parity were made by
 * scripts/make-parity-fixture.py with random weights, and the GPT-2 one (transformers' GPT2LMHeadModel, its weights
 * rewritten into rlvr's gpt2 layout) by scripts/make-gpt2-parity-fixture.py; expected.safetensors holds the
 * logits, the mean cross-entropy loss and its gradient wrt a few parameters for a fixed batch. No Python is
 * needed here.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import {
  crossEntropy,
  readSafetensors,
  reshape,
  setBackend,
  availableBackends,
  type BackendName,
  backward,
} from "../../src/engine/index.js";
import { hfName, loadModel } from "../../src/models/checkpoint.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "parity");

/** Largest |a - b| over two arrays of equal length. */
function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe.each(availableBackends() as BackendName[])("parity with transformers (%s backend)", (backendName) => {
  describe.each(["llama", "qwen2", "gpt2"])("%s", (name) => {
    it("matches logits, loss and gradients to 1e-4", () => {
      setBackend(backendName);
      const dir = join(FIXTURES, name);
      const { model } = loadModel(dir);
      const exp = readSafetensors(join(dir, "expected.safetensors")).tensors;
      const [b, t] = exp["input_ids"]!.shape as [number, number];
      const ids = Int32Array.from(exp["input_ids"]!.data);
      const targets = Int32Array.from(exp["targets"]!.data);

      const logits = model.forward(ids, b, t); // (B, T, V)
      expect(logits.shape).toEqual(exp["logits"]!.shape);
      expect(maxAbsDiff(logits.data, exp["logits"]!.data)).toBeLessThan(1e-4);

      const loss = crossEntropy(reshape(logits, [b * t, model.config.vocabSize]), targets, { ignoreIndex: -100 });
      expect(Math.abs(loss.item() - exp["loss"]!.data[0]!)).toBeLessThan(1e-4);
      backward(loss);
      const params = new Map(model.namedParameters().map(([n, p]) => [hfName(n), p]));
      const gradNames = Object.keys(exp).filter((k) => k.startsWith("grad."));
      expect(gradNames.length).toBeGreaterThan(2);
      for (const g of gradNames) {
        const p = params.get(g.slice(5));
        expect(p?.grad, g).toBeTruthy();
        expect(maxAbsDiff(p!.grad!, exp[g]!.data), g).toBeLessThan(1e-4);
      }
    });
  });
});
