/**
 * "matmul-kernel": CUDA-L2 style kernel optimisation, CPU edition (rewards spec §10). The prompt gives a matrix
 * product shape; the completion writes `function matmul(A, B, C, m, n, k)` (row-major Float32Array views, write C)
 * in a fenced ```js block, and is timed against the naive kernel in separate isolates. Terms: `speed` (weight 1,
 * `kernel-speed`: clip(S − 1, −0.9, 9), −1 on any failed gate) and `correct` (weight 0, `kernel-correct`, the
 * pass@k term). The gold completion is the naive kernel: correct, S ≈ 1, speed ≈ 0 — a warm-start that teaches the
 * format, not speed. With `language: "wat"` the kernel is a WebAssembly text module (rewards/kernel/wat.ts) and
 * the gold is the naive module.
 *
 * The kernel must be correct for every shape and for any disjoint placement of its operands: the harness also probes
 * other shapes, structured matrices and a shared buffer (rewards/kernel/probes.ts).
 *
 * With `prompt: "short"` the prompt is the language and shape alone (`js matmul m=64 n=96 k=128`), for small models
 * that learn the answer's form from SFT; problems, split and gold are the same.
 *
 * Shapes are drawn so that one naive call does at least 64·64·128 multiply-adds (about 1 ms on a 2020s core, the
 * spec's timer-resolution floor, §10.2 #5).
 */
import { z } from "zod";
import type { KernelGold } from "../rewards/kernel/reward.js";
import { naiveKernelCompletion } from "../rewards/kernel/reward.js";
import { defineTask } from "./define-task.js";
import type { TaskDefinition } from "./registry.js";
import type { RewardTerm, Task } from "./types.js";

const DIMS = [64, 96, 128, 160, 192, 256] as const;

/** Options of "matmul-kernel". */
export const matmulKernelOptions = z
  .object({
    profile: z.enum(["test", "train", "paper"]).default("train").describe("timing profile of the reward"),
    language: z.enum(["js", "wat"]).default("js").describe("kernel language: JavaScript, or WebAssembly text"),
    maxDim: z.number().int().min(64).max(256).default(256).describe("largest m, n or k"),
    minMacs: z
      .number()
      .int()
      .positive()
      .default(64 * 64 * 128)
      .describe("smallest m·n·k"),
    prompt: z
      .enum(["full", "short"])
      .default("full")
      .describe('"short": only "js matmul m=.. n=.. k=.." (small models taught the format by SFT)'),
  })
  .strict();

/** Options after defaults. */
export type MatmulKernelOptions = z.infer<typeof matmulKernelOptions>;

/** The prompt for one shape; `short` is the shape alone, for small models that learn the format from SFT. */
export function kernelPrompt(g: KernelGold, language: "js" | "wat" = "js", form: "full" | "short" = "full"): string {
  if (form === "short") return `${language} matmul m=${g.m} n=${g.n} k=${g.k}\n`;
  if (language === "wat") {
    return (
      `Write the fastest correct WebAssembly text module for C = A·B with m=${g.m}, n=${g.n}, k=${g.k} (f32, row-major).\n` +
      `Export "memory" and func "matmul" (param a b c m n k i32): a, b, c are byte offsets of A, B and C in that memory; ` +
      `write all m·n values of C. No imports. Answer with one fenced \`\`\`wat block; it is timed against the naive ` +
      `JavaScript triple loop at this shape, and every call must match a float64 reference to rtol 1e-4 — also on ` +
      `other shapes and on zero, identity and sparse matrices.`
    );
  }
  return (
    `Write the fastest correct JavaScript kernel for C = A·B with m=${g.m}, n=${g.n}, k=${g.k} (float32, row-major).\n` +
    `Define function matmul(A, B, C, m, n, k): A is a Float32Array of m·k, B of k·n, and you must write all m·n ` +
    `values of C in place (its initial contents are garbage). A, B and C may be views into one shared buffer. ` +
    `No clocks, globals, workers or async. Answer with one fenced \`\`\`js block; it is timed against the naive ` +
    `triple loop at this shape, and every call must match a float64 reference to rtol 1e-4 — also on other shapes ` +
    `and on zero, identity and sparse matrices.`
  );
}

const matmulKernel = defineTask<KernelGold, MatmulKernelOptions>({
  name: "matmul-kernel",
  summary: "CUDA-L2 (CPU edition): write a fast, correct JS matmul kernel; reward = measured speedup over naive",
  options: matmulKernelOptions,
  build: (o) => {
    const dims = DIMS.filter((d) => d <= o.maxDim);
    const rewardOptions = { profile: o.profile, language: o.language };
    const terms: RewardTerm[] = [
      { name: "speed", reward: "kernel-speed", weight: 1, options: rewardOptions },
      { name: "correct", reward: "kernel-correct", weight: 0, options: rewardOptions },
    ];
    const language = o.language === "wat" ? "WebAssembly-text" : "JS";
    return {
      description: `write a fast ${language} matmul kernel (dims from ${dims.join(", ")}); timed against the naive JS kernel`,
      terms,
      correctTerm: "correct",
      maxNewTokens: 1024,
      draw(rng) {
        for (;;) {
          const [m, n, k] = [rng.choice(dims), rng.choice(dims), rng.choice(dims)];
          if (m * n * k < o.minMacs) continue;
          const gold: KernelGold = { m, n, k, dtype: "float32", baseline: "naive" };
          const goldCompletion = naiveKernelCompletion(o.language);
          return { key: `${m}x${n}x${k}`, prompt: kernelPrompt(gold, o.language, o.prompt), gold, goldCompletion };
        }
      },
    };
  },
});

/** Builds the "matmul-kernel" task. */
export const createMatmulKernelTask: (options?: Partial<MatmulKernelOptions>) => Task<KernelGold> = matmulKernel.create;

/** Registry definition of "matmul-kernel". */
export const matmulKernelTask: TaskDefinition<MatmulKernelOptions> = matmulKernel.definition;
