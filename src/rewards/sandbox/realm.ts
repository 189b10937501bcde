/**
 * The trusted script that prepares a fresh V8 context before any model-written code runs in it (rewards spec §12).
 *
 * A bare isolated-vm context has only ECMAScript intrinsics: no `require`, `process`, `fetch`, timers, file system or
 * network exist to begin with. This script further removes or fixes what a reward did not grant:
 * - `Date`: replaced by a fixed stub (default) or removed (`clock: "none"`, kernels; spec §10.3 #7). The real
 *   constructor stays out of reach (`Date.prototype.constructor` is the stub), `Intl.DateTimeFormat` formats the
 *   fixed instant when given no date (in both modes: neither realm has a clock), and `Temporal` is removed;
 * - `Math.random`: replaced by a seeded xoshiro128** stream (determinism);
 * - `SharedArrayBuffer`, `Atomics`, `WebAssembly`, `performance`: removed unless granted; granted WebAssembly has its
 *   memories and tables capped (wasm-cap.ts), since wasm memory lies outside the isolate's heap limit;
 * - optionally every intrinsic prototype is frozen (`freeze: true`), so code in this realm cannot patch the
 *   built-ins a trusted harness in the same realm relies on (spec §10.2 #1). Not for timed code: a frozen
 *   Object.prototype or %TypedArray%.prototype makes V8 take slow paths for typed-array stores (~20×).
 */
import { pagesForMb, wasmCapScript } from "./wasm-cap.js";

/** What a reward may grant the code it runs; everything defaults to "not granted". */
export interface SandboxAllow {
  /** Keep `WebAssembly` (wasm-kernel tasks only). */
  wasm?: boolean;
  /** Keep `SharedArrayBuffer` and `Atomics`. */
  sharedMemory?: boolean;
}

/** Options of the realm preparation script. */
export interface RealmOptions {
  /** Seed of `Math.random` inside the realm. */
  seed: number;
  /** "fixed": `Date` is a stub frozen at FIXED_TIME_MS; "none": no `Date` at all. */
  clock?: "fixed" | "none";
  /** Freeze the intrinsic prototypes and constructors after preparation. */
  freeze?: boolean;
  /** Grants. */
  allow?: SandboxAllow;
  /** Cap on each WebAssembly memory (MB) when `allow.wasm`; default 256 (the kernel reward's heap limit). */
  wasmMemoryMb?: number;
}

/** Largest WebAssembly table (entries) in a realm: 64 Ki entries, 512 KiB of references. */
export const WASM_MAX_TABLE_ELEMENTS = 65_536;

/** The instant the fixed `Date` stub reports (2024-01-01T00:00:00Z). */
export const FIXED_TIME_MS = 1_704_067_200_000;

/** Builds the preparation script for one fresh context. */
export function realmScript(opts: RealmOptions): string {
  const seed = opts.seed >>> 0 || 1;
  const allow = opts.allow ?? {};
  const lines: string[] = ['"use strict";'];
  // Seeded Math.random (xoshiro128** seeded by splitmix32, as in src/util/rng.ts).
  lines.push(`(() => {
    let x = ${seed} >>> 0;
    const sm = () => { x = (x + 0x9e3779b9) >>> 0; let z = x; z = Math.imul(z ^ (z >>> 16), 0x85ebca6b); z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35); return (z ^ (z >>> 16)) >>> 0; };
    let a = sm(), b = sm(), c = sm(), d = sm();
    const rotl = (v, k) => (v << k) | (v >>> (32 - k));
    const random = () => {
      const r = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
      const t = b << 9; c ^= a; d ^= b; b ^= c; a ^= d; c ^= t; d = rotl(d, 11);
      return r / 4294967296;
    };
    Object.defineProperty(Math, "random", { value: random, writable: false, configurable: false });
  })();`);
  if ((opts.clock ?? "fixed") === "fixed") {
    lines.push(`(() => {
      const RealDate = Date;
      const FIXED = ${FIXED_TIME_MS};
      function FixedDate(...args) {
        if (!new.target) return new RealDate(FIXED).toString();
        return args.length === 0 ? new RealDate(FIXED) : new RealDate(...args);
      }
      FixedDate.now = () => FIXED;
      FixedDate.UTC = RealDate.UTC;
      FixedDate.parse = RealDate.parse;
      FixedDate.prototype = RealDate.prototype;
      // Without this, new (new Date().constructor)() would read the real clock.
      Object.defineProperty(RealDate.prototype, "constructor", { value: FixedDate,
        writable: true, configurable: true });
      Object.defineProperty(globalThis, "Date", { value: FixedDate, writable: false, configurable: false });
    })();`);
  } else {
    lines.push(`delete globalThis.Date;`);
  }
  lines.push(intlClockScript());
  lines.push(`delete globalThis.performance; delete globalThis.Temporal;`);
  if (!allow.sharedMemory) lines.push(`delete globalThis.SharedArrayBuffer; delete globalThis.Atomics;`);
  if (!allow.wasm) lines.push(`delete globalThis.WebAssembly;`);
  else {
    const maxPages = pagesForMb(opts.wasmMemoryMb ?? 256);
    lines.push(wasmCapScript({ maxPages, maxTableElements: WASM_MAX_TABLE_ELEMENTS }));
  }
  if (opts.freeze) {
    lines.push(`(() => {
      const seen = new Set();
      const freeze = (o) => {
        if (o === null || (typeof o !== "object" && typeof o !== "function") || seen.has(o)) return;
        seen.add(o);
        Object.freeze(o);
        for (const k of Reflect.ownKeys(o)) {
          const d = Object.getOwnPropertyDescriptor(o, k);
          if (d && "value" in d) freeze(d.value);
        }
        freeze(Object.getPrototypeOf(o));
      };
      const typedArray = Object.getPrototypeOf(Int8Array);
      freeze(typedArray);
      for (const k of Reflect.ownKeys(globalThis)) {
        const v = globalThis[k];
        if (typeof v === "function" || (typeof v === "object" && v !== null && v !== globalThis)) freeze(v);
      }
      freeze(Object.getPrototypeOf(function* () {}));
      freeze(Object.getPrototypeOf(async function () {}));
    })();`);
  }
  return lines.join("\n");
}

/**
 * `Intl.DateTimeFormat` reads the clock when it formats no date (`format()`, `formatToParts()`): both are wrapped so
 * that a missing date is the fixed instant. The originals stay in this closure.
 */
function intlClockScript(): string {
  return `(() => {
    if (typeof Intl !== "object" || typeof Intl.DateTimeFormat !== "function") return;
    const FIXED = ${FIXED_TIME_MS}, apply = Reflect.apply, proto = Intl.DateTimeFormat.prototype;
    const formatGetter = Object.getOwnPropertyDescriptor(proto, "format").get;
    const realFormatToParts = proto.formatToParts;
    Object.defineProperty(proto, "format", {
      configurable: true,
      get() {
        const bound = apply(formatGetter, this, []);
        return (date) => bound(date === undefined ? FIXED : date);
      },
    });
    Object.defineProperty(proto, "formatToParts", {
      configurable: true,
      writable: true,
      value: function formatToParts(date) {
        return apply(realFormatToParts, this, [date === undefined ? FIXED : date]);
      },
    });
  })();`;
}
