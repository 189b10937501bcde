/**
 * Backend selection. The active `Kernels` is `native` when the addon loads and `js` otherwise; RLVR_BACKEND=js
 * or RLVR_BACKEND=native forces one. Asking for native when it cannot load prints one warning and uses js.
 */
import { ConfigError } from "../../util/errors.js";
import { jsKernels } from "./js.js";
import type { Kernels } from "./kernels.js";
import { loadNativeKernels } from "./native.js";

/** Names of the two backends. */
export type BackendName = "js" | "native";

let active: Kernels | null = null;
let nativeTried = false;
let nativeKernels: Kernels | null = null;
let warned = false;

function tryNative(): Kernels | null {
  if (!nativeTried) {
    nativeTried = true;
    try {
      nativeKernels = loadNativeKernels();
    } catch (e) {
      nativeKernels = null;
      warnOnce(`rlvr: native backend failed to load (${(e as Error).message}); using js`);
    }
  }
  return nativeKernels;
}

function warnOnce(msg: string): void {
  if (warned) return;
  warned = true;
  process.emitWarning(msg, { code: "RLVR_BACKEND" });
}

function resolve(name: BackendName): Kernels {
  if (name === "js") return jsKernels;
  const k = tryNative();
  if (k) return k;
  warnOnce("rlvr: the native backend is not built or cannot load (run `npm run build:native`); using the js backend");
  return jsKernels;
}

/** The backend an RLVR_BACKEND value asks for: unset or empty means the default, native. */
export function requestedBackend(env: string | undefined): BackendName {
  if (env === undefined || env === "") return "native";
  if (env !== "js" && env !== "native") throw new ConfigError(`RLVR_BACKEND must be "js" or "native", got "${env}"`);
  return env;
}

/** The active kernel set (chosen on first use from RLVR_BACKEND). */
export function backend(): Kernels {
  active ??= resolve(requestedBackend(process.env["RLVR_BACKEND"]));
  return active;
}

/** Switches the active backend; native falls back to js (with one warning) when unavailable. */
export function setBackend(name: BackendName): Kernels {
  if (name !== "js" && name !== "native")
    throw new ConfigError(`setBackend: expected "js" or "native", got "${String(name)}"`);
  active = resolve(name);
  return active;
}

/** Runs `fn` with `kernels` active, restoring the previous backend afterwards (profiling, tests). */
export function useKernelsWhile<T>(kernels: Kernels, fn: () => T): T {
  const prev = backend();
  active = kernels;
  try {
    return fn();
  } finally {
    active = prev;
  }
}

/** Backends that can run here: always "js", plus "native" when the addon loads. */
export function availableBackends(): BackendName[] {
  return tryNative() ? ["js", "native"] : ["js"];
}

/** The js kernels, regardless of the active backend (for tests comparing backends). */
export function jsBackend(): Kernels {
  return jsKernels;
}

/** The native kernels, or null when the addon is not available. */
export function nativeBackend(): Kernels | null {
  return tryNative();
}
