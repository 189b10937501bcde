/**
 * runTrustedSync (src/rewards/sandbox/run.ts), which runs task generators' gold programs: many calls in a row must not
 * exhaust the shared isolate. With the optimisation task's prelude the isolate's heap grew by about 150 KB a call and
 * isolated-vm disposed it after about 800 calls ("Isolate was disposed during execution due to memory limit"), so
 * bench:seeds sirl could not generate its 4,000 training problems; the isolate is now replaced when its heap is large.
 */
import { describe, expect, it } from "vitest";
import { runTrustedSync, trustedIsolatesRecycled } from "../../src/rewards/sandbox/run.js";
import { PRELUDE } from "../../src/rewards/solver/lp-model.js";

const program = (i: number) => `const m = new Model("maximize");
m.addVar("x", { lb: 0, ub: ${i % 7} + 1, type: "integer" });
m.addConstraint({ x: 1 }, "<=", 10, "cap");
m.setObjective({ x: 2 });
return m;`;

describe("runTrustedSync", () => {
  it("runs 1,200 gold programs in a row, replacing the isolate as its heap grows, with the same values", () => {
    const before = trustedIsolatesRecycled();
    for (let i = 0; i < 1200; i++) {
      const value = runTrustedSync({ code: program(i), prelude: PRELUDE, timeoutMs: 2000, seed: 0 }) as {
        sense: string;
        variables: Record<string, { ub: number }>;
      };
      if (i % 100 === 0) {
        expect(value.sense).toBe("maximize");
        expect(JSON.stringify(value)).toContain(`"ub":${(i % 7) + 1}`);
      }
    }
    expect(trustedIsolatesRecycled()).toBeGreaterThan(before);
  }, 120_000);
});
