/**
 * The kernel path of the process boundary (docs/sandbox.md "Process model"): a kernel whose source makes V8 abort
 * kills only its pool worker process; `kernel-speed` gives it the failure score (−1, not `null`), the crash is
 * counted, and the pool goes on to time an honest kernel.
 */
import { afterAll, describe, expect, it } from "vitest";
import { rewards } from "../../src/rewards/index.js";
import { naiveKernelCompletion } from "../../src/rewards/kernel/reward.js";
import { closeSharedPool, sharedPool } from "../../src/rewards/sandbox/pool.js";

afterAll(() => closeSharedPool());

const GOLD = { m: 16, n: 16, k: 16, dtype: "float32", baseline: "naive" };
const fenced = (src: string) => "```js\n" + src + "\n```";

describe("a kernel that aborts V8", () => {
  it("earns −1, is counted, and the next kernel is still timed", async () => {
    const bomb = fenced("const junk = new Array(1e8).fill(0).length;\nfunction matmul(A, B, C, m, n, k) {}");
    const score = (completion: string) =>
      rewards.score("kernel-speed", { completion, gold: GOLD }, { profile: "test" });
    const before = sharedPool().stats.crashed;
    const crashed = await score(bomb);
    expect(crashed).toMatchObject({ score: -1, terms: { correct: 0 } });
    expect(String(crashed.info?.reason)).toMatch(/crashed its worker process.*out of memory/);
    expect(sharedPool().stats.crashed).toBe(before + 1);
    const honest = await score(naiveKernelCompletion("js"));
    expect(honest.score).not.toBeNull();
    expect(honest.terms.correct).toBe(1);
  });
});
