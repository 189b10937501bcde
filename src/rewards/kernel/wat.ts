/**
 * WebAssembly-text kernels (wasm-kernel tasks, rewards spec §10.3 #7): the completion's ```wat module is compiled
 * with wabt (WebAssembly Binary Toolkit, itself WebAssembly, so parsing untrusted text cannot touch the host) in the
 * reward worker, and the bytes are wrapped in trusted JS glue that runs in the kernel's isolate.
 *
 * Contract of the module: no imports at all (so it has no clock, no host calls); it exports `memory` and
 * `matmul(a, b, c, m, n, k)` where a, b, c are byte offsets of A, B and C (row-major f32) in that memory.
 * The glue copies A and B in, calls `matmul`, and copies C out: these copies are part of the kernel's timed cost,
 * as a device kernel's transfers would be. State left in the memory between calls is useless against fresh inputs
 * (a kernel that skips writing C hands back the previous call's C, which the spot checks catch).
 */
import { createRequire } from "node:module";

// wabt is CommonJS with `export =`, which an ES module under NodeNext can only load through require.
const wabtLoader = createRequire(import.meta.url)("wabt") as typeof import("wabt");
type Wabt = Awaited<ReturnType<typeof wabtLoader>>;

/** The slice of the WebAssembly JS API used here (the TypeScript lib in use declares no WebAssembly values). */
interface WasmApi {
  Module: {
    new (bytes: Uint8Array): object;
    imports(m: object): { module: string; name: string }[];
    exports(m: object): { name: string; kind: string }[];
  };
}
const WA = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

let wabt: Promise<Wabt> | null = null;

/** Compiles WebAssembly text to bytes; throws with wabt's message on a syntax or validation error. */
export async function compileWat(text: string): Promise<Uint8Array> {
  wabt ??= wabtLoader();
  const w = await wabt;
  const mod = w.parseWat("kernel.wat", text, {
    simd: true,
    bulk_memory: true,
    sign_extension: true,
    sat_float_to_int: true,
    multi_value: true,
  });
  try {
    mod.resolveNames();
    mod.validate();
    const bytes = mod.toBinary({}).buffer;
    const compiled = new WA.Module(bytes);
    const imports = WA.Module.imports(compiled);
    if (imports.length)
      throw new Error(
        `the module must not import anything; it imports ${imports.map((i) => `${i.module}.${i.name}`).join(", ")}`,
      );
    const exports = WA.Module.exports(compiled).map((e) => `${e.name}:${e.kind}`);
    for (const need of ["memory:memory", "matmul:function"]) {
      if (!exports.includes(need)) throw new Error(`the module must export ${need.replace(":", " (")})`);
    }
    return bytes;
  } finally {
    mod.destroy();
  }
}

/** Trusted JS that instantiates the module in the kernel's isolate and exposes `matmul(A, B, C, m, n, k)`. */
export function watGlueSource(bytes: Uint8Array): string {
  return `const __wasm = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array([${Array.from(bytes).join(",")}])), {});
const __memory = __wasm.exports.memory;
const __kernel = __wasm.exports.matmul;
function matmul(A, B, C, m, n, k) {
  const bytes = (A.length + B.length + C.length) * 4;
  if (__memory.buffer.byteLength < bytes) __memory.grow(Math.ceil((bytes - __memory.buffer.byteLength) / 65536));
  const f = new Float32Array(__memory.buffer);
  const b0 = A.length, c0 = A.length + B.length;
  f.set(A, 0);
  f.set(B, b0);
  __kernel(0, b0 * 4, c0 * 4, m, n, k);
  C.set(new Float32Array(__memory.buffer, c0 * 4, C.length));
}`;
}

/** The naive kernel in WebAssembly text (f32 accumulation): the gold of wasm-kernel tasks. */
export const NAIVE_MATMUL_WAT = `(module
  (memory (export "memory") 1)
  (func (export "matmul") (param $a i32) (param $b i32) (param $c i32) (param $m i32) (param $n i32) (param $k i32)
    (local $i i32) (local $j i32) (local $p i32) (local $s f32)
    (block $done_i (loop $next_i
      (br_if $done_i (i32.ge_u (local.get $i) (local.get $m)))
      (local.set $j (i32.const 0))
      (block $done_j (loop $next_j
        (br_if $done_j (i32.ge_u (local.get $j) (local.get $n)))
        (local.set $s (f32.const 0))
        (local.set $p (i32.const 0))
        (block $done_p (loop $next_p
          (br_if $done_p (i32.ge_u (local.get $p) (local.get $k)))
          (local.set $s (f32.add (local.get $s) (f32.mul
            (f32.load (i32.add (local.get $a) (i32.shl (i32.add (i32.mul (local.get $i) (local.get $k)) (local.get $p)) (i32.const 2))))
            (f32.load (i32.add (local.get $b) (i32.shl (i32.add (i32.mul (local.get $p) (local.get $n)) (local.get $j)) (i32.const 2)))))))
          (local.set $p (i32.add (local.get $p) (i32.const 1)))
          (br $next_p)))
        (f32.store (i32.add (local.get $c) (i32.shl (i32.add (i32.mul (local.get $i) (local.get $n)) (local.get $j)) (i32.const 2))) (local.get $s))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $next_j)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next_i)))))`;
