/** Backend selection: js is always there, RLVR_BACKEND forces a backend, a missing addon warns once. */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import * as E from "../../src/engine/index.js";
import { requestedBackend } from "../../src/engine/backends/index.js";

const ROOT = resolve(__dirname, "..", "..");

/** Runs a snippet in a fresh process (backend choice happens once per process) and returns stdout + stderr. */
function runWith(env: Record<string, string>, code: string): string {
  const script = `import * as E from "./src/engine/index.js"; ${code}`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  return `${r.stdout}${r.stderr}`;
}

describe("backend selection", () => {
  it("always offers js; setBackend switches", () => {
    expect(E.availableBackends()[0]).toBe("js");
    expect(E.setBackend("js").name).toBe("js");
    expect(E.backend().name).toBe("js");
    expect(() => E.setBackend("gpu" as never)).toThrow(/expected "js" or "native"/);
  });

  it("reads RLVR_BACKEND: js, native, default native, anything else an error", () => {
    expect(requestedBackend("js")).toBe("js");
    expect(requestedBackend("native")).toBe("native");
    expect(requestedBackend(undefined)).toBe("native");
    expect(requestedBackend("")).toBe("native");
    expect(() => requestedBackend("cuda")).toThrow(/RLVR_BACKEND must be "js" or "native", got "cuda"/);
  });

  it("RLVR_BACKEND=native uses native, or falls back to js with exactly one warning", () => {
    const out = runWith(
      { RLVR_BACKEND: "native" },
      "E.backend(); E.setBackend('native'); console.log('active=' + E.backend().name)",
    );
    if (E.availableBackends().includes("native")) expect(out).toContain("active=native");
    else {
      expect(out).toContain("active=js");
      expect(out.match(/native backend is not built/g)).toHaveLength(1);
    }
  });
});

describe("profileKernels", () => {
  it("times each kernel while fn runs and restores the backend", () => {
    const before = E.backend();
    const { result, timings } = E.profileKernels(() => {
      const x = E.param([2, 3], 1);
      E.backward(E.sum(E.exp(E.matmul(x, x, { transB: true }))));
      return 7;
    });
    expect(result).toBe(7);
    expect(E.backend()).toBe(before);
    const names = timings.map((t) => t.kernel);
    expect(names).toEqual(expect.arrayContaining(["matmul:NT", "unary:exp", "unaryBackward:exp", "sumRows"]));
    expect(timings.find((t) => t.kernel === "matmul:NT")!.calls).toBe(1);
  });
});
