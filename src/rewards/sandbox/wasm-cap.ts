/**
 * Bounds WebAssembly memory inside a sandbox realm (docs/sandbox.md "WebAssembly memory").
 *
 * A wasm memory lives outside the V8 heap, so the isolate's `memoryLimit` never sees it: a module that grows its
 * memory in a loop reached 0.8–0.9 GB under a 256 MB limit. Where WebAssembly is granted, this script (run by
 * `realmScript` before any untrusted code) replaces the constructors and functions that make memories and tables:
 *
 * - module bytes given to `Module`, `compile` or `instantiate` are copied, and their memory section is rewritten so
 *   every memory has a maximum of at most `maxPages` (64 KiB pages); `memory.grow` past it then fails inside wasm
 *   (returns −1) and `Memory.prototype.grow` throws. A module whose *minimum* is over the cap fails to compile;
 * - the same holds for tables (at most `maxTableElements` entries each), and a module may declare at most one
 *   memory and 16 tables; 64-bit memories are refused;
 * - `new Memory(...)` and `new Table(...)` get the same caps; the streaming variants are removed.
 *
 * Everything the script uses is captured before untrusted code runs, and the bytes are read only by index from a
 * private copy, so a program that patches `Uint8Array.prototype` or swaps the buffer afterwards cannot steer it.
 */

/** Caps applied inside the realm. */
export interface WasmCaps {
  /** Largest memory, in 64 KiB pages. */
  maxPages: number;
  /** Largest table, in entries. */
  maxTableElements: number;
}

/** Pages of 64 KiB in `mb` megabytes (at least 1). */
export function pagesForMb(mb: number): number {
  return Math.max(1, Math.floor((mb * 2 ** 20) / 65536));
}

/** The realm script that installs the caps; run it only where `WebAssembly` is granted. */
export function wasmCapScript(caps: WasmCaps): string {
  const maxPages = Math.max(1, Math.floor(caps.maxPages));
  const maxTable = Math.max(1, Math.floor(caps.maxTableElements));
  return `(() => {
  "use strict";
  const WA = WebAssembly, MAX_PAGES = ${maxPages}, MAX_TABLE = ${maxTable}, MAX_TABLES = 16;
  const RealModule = WA.Module, RealMemory = WA.Memory, RealTable = WA.Table;
  const realCompile = WA.compile, realInstantiate = WA.instantiate, realExports = RealModule.exports;
  const U8 = Uint8Array, AB = ArrayBuffer, isView = AB.isView, apply = Reflect.apply, construct = Reflect.construct;
  const CompileError = WA.CompileError, TypeErr = TypeError, RangeErr = RangeError, Num = Number, Str = String;
  const mathMin = Math.min, floor = Math.floor, reject = Promise.reject.bind(Promise);
  const taProto = Object.getPrototypeOf(U8.prototype);
  const get = (o, k) => Object.getOwnPropertyDescriptor(o, k).get;
  const viewBuffer = get(taProto, "buffer"), viewOffset = get(taProto, "byteOffset");
  const viewLength = get(taProto, "byteLength"), dvProto = DataView.prototype;
  const dvBuffer = get(dvProto, "buffer"), dvOffset = get(dvProto, "byteOffset"), dvLength = get(dvProto, "byteLength");
  const abLength = get(AB.prototype, "byteLength");
  const isTyped = (x) => { try { apply(viewBuffer, x, []); return true; } catch (e) { return false; } };
  const isModule = (x) => { try { realExports(x); return true; } catch (e) { return false; } };
  const fail = (why) => { throw new CompileError("wasm cap: " + why); };

  // A private copy of a BufferSource, read through captured getters only (typed-array indexing is not hookable).
  const copyBytes = (src) => {
    let view;
    if (isView(src)) {
      view = isTyped(src)
        ? new U8(apply(viewBuffer, src, []), apply(viewOffset, src, []), apply(viewLength, src, []))
        : new U8(apply(dvBuffer, src, []), apply(dvOffset, src, []), apply(dvLength, src, []));
    } else {
      apply(abLength, src, []); // throws a TypeError for anything that is not an ArrayBuffer
      view = new U8(src);
    }
    return new U8(view);
  };
  let pos = 0; // readLeb's cursor after the integer it read (no destructuring: array iteration is hookable)
  const readLeb = (b, n, p) => {
    let v = 0, shift = 0, byte;
    do {
      if (p >= n || shift > 28) fail("bad LEB128 integer");
      byte = b[p++];
      v += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    pos = p;
    return v;
  };
  const put = (w, byte) => { if (w.n >= w.cap) fail("rewrite overflow"); w.b[w.n++] = byte; };
  const putLeb = (w, v) => {
    do { let byte = v % 128; v = floor(v / 128); if (v > 0) byte |= 0x80; put(w, byte); } while (v > 0);
  };
  const writer = (cap) => ({ b: new U8(cap), n: 0, cap });
  // Copies one limits record (flags, min, [max]) with its maximum capped; returns the position after it.
  const capLimits = (b, n, p, cap, what, w) => {
    if (p >= n) fail("truncated " + what);
    const flags = b[p++];
    if (flags & 4) fail("64-bit " + what + "s are not allowed");
    if (flags > 3) fail("unknown " + what + " limits flags " + flags);
    const min = readLeb(b, n, p);
    const max = flags & 1 ? readLeb(b, n, pos) : cap;
    if (min > cap) fail("the " + what + " needs " + min + " > " + cap + " (the sandbox limit)");
    put(w, flags | 1);
    putLeb(w, min);
    putLeb(w, mathMin(max, cap));
    return pos;
  };
  const capModule = (src) => {
    const b = copyBytes(src), n = apply(viewLength, b, []);
    if (n < 8 || b[0] !== 0 || b[1] !== 0x61 || b[2] !== 0x73 || b[3] !== 0x6d) fail("not a WebAssembly module");
    const w = writer(n + 512);
    for (let i = 0; i < 8; i++) put(w, b[i]);
    let p = 8;
    while (p < n) {
      const id = b[p];
      const size = readLeb(b, n, p + 1), start = pos, end = start + size;
      if (end > n) fail("truncated section");
      if (id !== 4 && id !== 5) {
        for (let i = p; i < end; i++) put(w, b[i]);
        p = end;
        continue;
      }
      const count = readLeb(b, n, start);
      let q = pos;
      if (id === 5 && count > 1) fail("at most one memory");
      if (id === 4 && count > MAX_TABLES) fail("at most " + MAX_TABLES + " tables");
      const body = writer(size + 16 * count + 16);
      putLeb(body, count);
      for (let i = 0; i < count; i++) {
        if (id === 4) {
          const type = b[q++];
          if (type !== 0x70 && type !== 0x6f) fail("unsupported table type " + type);
          put(body, type);
        }
        q = capLimits(b, n, q, id === 5 ? MAX_PAGES : MAX_TABLE, id === 5 ? "memory" : "table", body);
      }
      if (q !== end) fail("unexpected bytes in a " + (id === 5 ? "memory" : "table") + " section");
      put(w, id);
      putLeb(w, body.n);
      for (let i = 0; i < body.n; i++) put(w, body.b[i]);
      p = end;
    }
    const out = new U8(w.n);
    for (let i = 0; i < w.n; i++) out[i] = w.b[i];
    return out;
  };
  const capDescriptor = (desc, cap, what) => {
    const name = "WebAssembly." + what;
    if (desc === null || typeof desc !== "object") throw new TypeErr(name + ": the descriptor must be an object");
    // Each field is read and converted once, so a getter or valueOf cannot answer differently to the check and to V8.
    const initial = Num(desc.initial), maximum = desc.maximum;
    const max = maximum === undefined ? cap : mathMin(Num(maximum), cap);
    if (!(initial <= cap)) throw new RangeErr(name + ": initial " + initial + " > " + cap + " (the sandbox limit)");
    if (what === "Memory") return { initial, maximum: max, shared: !!desc.shared };
    return { element: Str(desc.element), initial, maximum: max };
  };

  function Module(bytes) {
    if (!new.target) throw new TypeErr("WebAssembly.Module must be called with new");
    return construct(RealModule, [capModule(bytes)], new.target);
  }
  function Memory(desc) {
    if (!new.target) throw new TypeErr("WebAssembly.Memory must be called with new");
    return construct(RealMemory, [capDescriptor(desc, MAX_PAGES, "Memory")], new.target);
  }
  function Table(desc, value) {
    if (!new.target) throw new TypeErr("WebAssembly.Table must be called with new");
    const d = capDescriptor(desc, MAX_TABLE, "Table");
    return construct(RealTable, arguments.length > 1 ? [d, value] : [d], new.target);
  }
  for (const [fake, real] of [[Module, RealModule], [Memory, RealMemory], [Table, RealTable]]) {
    fake.prototype = real.prototype;
    Object.defineProperty(real.prototype, "constructor", { value: fake, writable: true, configurable: true });
  }
  Module.imports = RealModule.imports;
  Module.exports = RealModule.exports;
  Module.customSections = RealModule.customSections;
  const compile = function compile(bytes) {
    try { return realCompile(capModule(bytes)); } catch (e) { return reject(e); }
  };
  const instantiate = function instantiate(source, imports) {
    if (isModule(source)) return realInstantiate(source, imports);
    try { return realInstantiate(capModule(source), imports); } catch (e) { return reject(e); }
  };
  const define = (name, value) => Object.defineProperty(WA, name, { value, writable: false, configurable: false });
  define("Module", Module);
  define("Memory", Memory);
  define("Table", Table);
  define("compile", compile);
  define("instantiate", instantiate);
  delete WA.compileStreaming;
  delete WA.instantiateStreaming;
})();`;
}
