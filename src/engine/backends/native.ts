/**
 * Placeholder for the native (C++ addon) backend loader. The native-backend work replaces this file; until the
 * addon exists, loading reports that it is unavailable.
 */
import type { Kernels } from "./kernels.js";

/** The native kernels, or null when the addon is not built. */
export function loadNativeKernels(): Kernels | null {
  return null;
}
