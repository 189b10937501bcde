/**
 * The CPU kernel backend: each kernel runs in its own fresh V8 isolate (isolated-vm, so V8's JIT applies and timings
 * are meaningful) with no clock, timers, shared memory or (unless granted) WebAssembly (rewards spec §10.2 #1,
 * §10.3 #7, §12).
 *
 * Departure from §10.2 #1: intrinsics are NOT frozen. Freezing Object.prototype or %TypedArray%.prototype makes V8
 * take slow paths for every typed-array element store (measured ~20× slower for the row-blocked kernel), which
 * would distort the very timings we reward. Tampering is contained instead by isolation: the candidate and the
 * baseline live in separate isolates, and the harness captures everything it uses before the kernel's source runs.
 *
 * Before the kernel's source is evaluated, a trusted harness script runs in the realm and keeps, in a closure the
 * kernel cannot reach, the kernel function, the current buffers and the views A, B, C. The host then calls its
 * functions through references: `place` (untimed), `call` (timed on the host with `process.hrtime.bigint()` around
 * one synchronous `applySync`, which also drains the microtask queue), `read` (untimed copy-out). The clock is the
 * host's; the kernel's realm has none.
 */
import { cpus } from "node:os";
import ivm from "isolated-vm";
import { realmScript } from "../sandbox/realm.js";
import type { KernelBackend, LoadedKernel, PlacedBuffers } from "./types.js";

/** The harness script; its completion value is the object of harness functions. */
function harnessScript(): string {
  return `(() => {
    "use strict";
    const F32 = Float32Array;
    let kernel = null, bufs = null, A = null, B = null, C = null, m = 0, n = 0, k = 0;
    return {
      install(fn) {
        if (typeof fn !== "function") throw new TypeError("the source must define function matmul(A, B, C, m, n, k)");
        kernel = fn;
      },
      place(b0, b1, b2, ai, ao, bi, bo, ci, co, mm, nn, kk) {
        bufs = b1 === undefined ? [b0] : [b0, b1, b2];
        m = mm; n = nn; k = kk;
        A = new F32(bufs[ai], ao * 4, m * k);
        B = new F32(bufs[bi], bo * 4, k * n);
        C = new F32(bufs[ci], co * 4, m * n);
      },
      call() {
        const r = kernel(A, B, C, m, n, k);
        if (r !== null && (typeof r === "object" || typeof r === "function")) {
          let then;
          try { then = r.then; } catch (e) { return 1; }
          if (typeof then === "function") return 1;
        }
        return 0;
      },
      noop() { return 0; },
      read() { return bufs; },
    };
  })()`;
}

/** Wraps the kernel source so that its `matmul` is the completion value. */
function kernelScript(source: string): string {
  return `(function () { "use strict";\n${source}\n;return typeof matmul === "function" ? matmul : undefined; })()`;
}

const NS = (t0: bigint, t1: bigint): number => Number(t1 - t0);

class IsolateKernel implements LoadedKernel {
  constructor(
    private readonly isolate: ivm.Isolate,
    private readonly fns: { place: ivm.Reference; call: ivm.Reference; noop: ivm.Reference; read: ivm.Reference },
  ) {}

  place(p: PlacedBuffers): void {
    if (p.buffers.length !== 1 && p.buffers.length !== 3) throw new RangeError("place: one or three buffers");
    const copy = (x: Float32Array) =>
      new ivm.ExternalCopy(x.buffer.slice(x.byteOffset, x.byteOffset + x.byteLength)).copyInto({ release: true });
    const bufs = [...p.buffers.map(copy), undefined, undefined].slice(0, 3);
    const { a, b, c, shape } = p;
    const layout = [a.buffer, a.offset, b.buffer, b.offset, c.buffer, c.offset, shape.m, shape.n, shape.k];
    this.fns.place.applySync(undefined, [...bufs, ...layout], { timeout: 2000 });
  }

  timedCall(limitMs: number): { ns: number; error?: string; thenable?: boolean } {
    const t0 = process.hrtime.bigint();
    try {
      const r = this.fns.call.applySync(undefined, [], { timeout: Math.max(1, Math.ceil(limitMs)) }) as number;
      const t1 = process.hrtime.bigint();
      return { ns: NS(t0, t1), thenable: r === 1 };
    } catch (err) {
      const t1 = process.hrtime.bigint();
      const msg = err instanceof Error ? err.message : String(err);
      return { ns: NS(t0, t1), error: this.isolate.isDisposed ? `memory limit: ${msg}` : msg };
    }
  }

  timedNoop(): number {
    const t0 = process.hrtime.bigint();
    this.fns.noop.applySync(undefined, []);
    return NS(t0, process.hrtime.bigint());
  }

  readBack(): Float32Array[] {
    const out = this.fns.read.applySync(undefined, [], { result: { copy: true }, timeout: 2000 }) as ArrayBuffer[];
    if (!Array.isArray(out) || !out.every((x) => x instanceof ArrayBuffer)) {
      throw new Error("the harness buffers could not be read back");
    }
    return out.map((x) => new Float32Array(x));
  }

  dispose(): void {
    if (!this.isolate.isDisposed) this.isolate.dispose();
  }
}

/** The V8-isolate CPU backend. */
export const v8Backend: KernelBackend = {
  name: "v8-isolate",
  describe() {
    return {
      backend: "v8-isolate",
      cpu: cpus()[0]?.model ?? "unknown",
      node: process.version,
      v8: process.versions.v8,
    };
  },
  load(source, opts) {
    const isolate = new ivm.Isolate({ memoryLimit: opts.memoryMb });
    try {
      const context = isolate.createContextSync();
      context.evalSync(realmScript({ seed: opts.seed, clock: "none", freeze: false, allow: { wasm: opts.allowWasm } }));
      const h = context.evalSync(harnessScript(), { reference: true }) as ivm.Reference<Record<string, unknown>>;
      const get = (name: string) => h.getSync(name, { reference: true }) as ivm.Reference;
      const fns = { place: get("place"), call: get("call"), noop: get("noop"), read: get("read") };
      const kernel = context.evalSync(kernelScript(source), { reference: true, timeout: 2000 }) as ivm.Reference;
      get("install").applySync(undefined, [kernel.derefInto()], { timeout: 1000 });
      return new IsolateKernel(isolate, fns);
    } catch (err) {
      if (!isolate.isDisposed) isolate.dispose();
      throw err;
    }
  },
};
