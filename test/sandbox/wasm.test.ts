/**
 * WebAssembly memory is bounded (docs/sandbox.md "WebAssembly memory"): wasm memory lies outside the isolate's heap
 * limit, so a granted realm caps every memory at `memoryMb` and every table at 64 Ki entries, whichever way the
 * program makes them: module bytes (typed array, DataView, ArrayBuffer), `Memory`/`Table` constructors, `grow` from
 * JavaScript or `memory.grow` inside wasm, and with the intrinsics the cap relies on tampered with first.
 */
import fc from "fast-check";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSharedPool } from "../../src/rewards/sandbox/pool.js";
import { runInSandbox, type SandboxResult } from "../../src/rewards/sandbox/run.js";
import { pagesForMb } from "../../src/rewards/sandbox/wasm-cap.js";
import { req } from "./helpers.js";

afterAll(() => closeSharedPool());

const wabtLoader = createRequire(import.meta.url)("wabt") as typeof import("wabt");
async function wat(text: string): Promise<number[]> {
  const w = await wabtLoader();
  const mod = w.parseWat("t.wat", text);
  try {
    return Array.from(mod.toBinary({}).buffer);
  } finally {
    mod.destroy();
  }
}

const MEMORY_MB = 16;
const CAP = pagesForMb(MEMORY_MB); // 256 pages of 64 KiB
/** Grows its memory 16 pages at a time until `memory.grow` fails, then returns the size in pages. */
const growLoop = (memory: string) => `(module (memory (export "memory") ${memory})
  (func (export "grow") (result i32)
    (block $full (loop $more
      (br_if $full (i32.eq (memory.grow (i32.const 16)) (i32.const -1)))
      (br $more)))
    (memory.size)))`;

let growing: number[];
let growingWithMax: number[];
let bigMinimum: number[];
let bigTable: number[];
beforeAll(async () => {
  growing = await wat(growLoop("1"));
  growingWithMax = await wat(growLoop("1 65536"));
  bigMinimum = await wat(`(module (memory (export "memory") ${CAP + 1}))`);
  bigTable = await wat(`(module (table (export "t") 1 funcref)
    (func (export "grow") (result i32) (table.grow (ref.null func) (i32.const 1000000))))`);
});

/** Runs `code` with WebAssembly granted and `input.bytes` holding a module. */
function runWasm(code: string, bytes: number[] = []): Promise<SandboxResult> {
  return runInSandbox(req(code, { memoryMb: MEMORY_MB, allow: { wasm: true }, input: { bytes } }));
}
const INSTANCE = "new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(input.bytes)), {})";

describe("WebAssembly memory under the memory limit", () => {
  it("memory.grow inside wasm stops at the cap (a module without a maximum)", async () => {
    const r = await runWasm(`return ${INSTANCE}.exports.grow();`, growing);
    expect(r).toMatchObject({ ok: true });
    expect((r as { value: number }).value).toBeLessThanOrEqual(CAP);
    expect((r as { value: number }).value).toBeGreaterThan(CAP - 16);
  });

  it("a declared maximum above the cap is lowered to it", async () => {
    const code = `const i = ${INSTANCE}; const pages = i.exports.grow();
      let threw = false; try { i.exports.memory.grow(${CAP}); } catch (e) { threw = e instanceof RangeError; }
      return [pages, threw, i.exports.memory.buffer.byteLength <= ${CAP * 65536}];`;
    const r = await runWasm(code, growingWithMax);
    expect(r).toMatchObject({ ok: true });
    const [pages, threw, within] = (r as { value: [number, boolean, boolean] }).value;
    expect(pages).toBeLessThanOrEqual(CAP);
    expect([threw, within]).toEqual([true, true]);
  });

  it("a module whose minimum is over the cap does not compile", async () => {
    const code = `try { ${INSTANCE}; return 'instantiated'; } catch (e) { return e.name + ': ' + e.message; }`;
    const r = await runWasm(code, bigMinimum);
    expect(r).toMatchObject({ ok: true });
    expect((r as { value: string }).value).toMatch(/^CompileError: wasm cap: the memory needs 257 > 256/);
  });

  it("the Memory constructor is capped: initial over the cap throws, maximum is lowered, grow stops", async () => {
    const code = `const out = [];
      try { new WebAssembly.Memory({ initial: ${CAP + 1} }); out.push('made'); } catch (e) { out.push(e.name); }
      const m = new WebAssembly.Memory({ initial: 1, maximum: 65536 });
      try { m.grow(${CAP}); out.push('grew'); } catch (e) { out.push(e.name); }
      const g = { get initial() { return this.n++ ? ${CAP * 100} : 1; }, n: 0 };
      try { const t = new WebAssembly.Memory(g); out.push(t.buffer.byteLength); } catch (e) { out.push(e.name); }
      out.push(m instanceof WebAssembly.Memory, Object.getPrototypeOf(m).constructor === WebAssembly.Memory);
      return out;`;
    expect(await runWasm(code)).toMatchObject({ ok: true, value: ["RangeError", "RangeError", 65536, true, true] });
  });

  it("tables are capped too (table.grow inside wasm and the Table constructor)", async () => {
    const code = `const grown = ${INSTANCE}.exports.grow();
      let big;
      try { new WebAssembly.Table({ element: 'anyfunc', initial: 1e6 }); big = 'made'; } catch (e) { big = e.name; }
      return [grown, big];`;
    expect(await runWasm(code, bigTable)).toMatchObject({ ok: true, value: [-1, "RangeError"] });
  });

  it("every byte source is read the same way: DataView, offset subarray, bare ArrayBuffer", async () => {
    const code = `const raw = new Uint8Array(input.bytes.length + 3); raw.set(input.bytes, 3);
      const sources = [new DataView(raw.buffer, 3), raw.subarray(3), raw.slice(3).buffer];
      return sources.map((s) => new WebAssembly.Instance(new WebAssembly.Module(s), {}).exports.grow() <= ${CAP});`;
    expect(await runWasm(code, growing)).toMatchObject({ ok: true, value: [true, true, true] });
  });

  it("tampering with the intrinsics the cap reads does not lift it", async () => {
    const code = `const bytes = new Uint8Array(input.bytes), proto = Object.getPrototypeOf(Uint8Array.prototype);
      Object.defineProperty(proto, 'length', { get() { return 0; } });
      Object.defineProperty(proto, 'byteLength', { get() { return 0; } });
      Object.defineProperty(Array.prototype, Symbol.iterator, { value: function* () {} });
      Math.min = Math.max; Math.floor = () => 0; Number = () => 0;
      return new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports.grow();`;
    const r = await runWasm(code, growing);
    expect(r).toMatchObject({ ok: true });
    expect((r as { value: number }).value).toBeLessThanOrEqual(CAP);
  });

  it("property: any declared (minimum, maximum) compiles only under the cap and never grows past it", async () => {
    const limits = fc.sample(
      fc.record({ min: fc.integer({ min: 0, max: 2 * CAP }), extra: fc.option(fc.integer({ min: 0, max: 70_000 })) }),
      { numRuns: 24, seed: 41 },
    );
    const modules = await Promise.all(
      limits.map(({ min, extra }) =>
        wat(`(module (memory (export "memory") ${min}${extra === null ? "" : ` ${min + extra}`}))`),
      ),
    );
    // In one sandbox call: instantiate each, then try to grow it to the largest size it should allow, and one more.
    const code = `return input.modules.map((bytes, i) => {
      let m;
      try { m = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(bytes)), {}).exports.memory; }
      catch (e) { return 'rejected'; }
      const allowed = Math.min(${CAP}, input.max[i]);
      const grew = m.grow(allowed - m.buffer.byteLength / 65536) >= 0;
      let over = false; try { m.grow(1); over = true; } catch (e) {}
      return [grew, over, m.buffer.byteLength / 65536];
    });`;
    const max = limits.map(({ min, extra }) => (extra === null ? 65_536 : min + Math.min(extra, 65_536 - min)));
    const r = await runInSandbox(req(code, { memoryMb: MEMORY_MB, allow: { wasm: true }, input: { modules, max } }));
    expect(r.ok).toBe(true);
    const got = (r as { value: unknown[] }).value;
    limits.forEach(({ min }, i) => {
      if (min > CAP) expect(got[i], `min ${min}`).toBe("rejected");
      else expect(got[i], `min ${min}, max ${max[i]}`).toEqual([true, false, Math.min(CAP, max[i]!)]);
    });
  });

  it("an ordinary module still works, and the glue's own memory.grow within the cap succeeds", async () => {
    const code = `const i = ${INSTANCE}; const before = i.exports.memory.grow(10);
      return [before, i.exports.memory.buffer.byteLength];`;
    expect(await runWasm(code, growing)).toMatchObject({ ok: true, value: [1, 11 * 65536] });
  });
});
