/**
 * The difference between two runs' configs, field by field: both configs are flattened to dotted paths
 * (`algorithm.kl.beta`, array items by index: `reward.terms.0.weight`), and every path whose value differs or that
 * only one side has is listed, sorted by path.
 */

/** One field that differs; `undefined` on a side means that side does not have the field. */
export interface ConfigChange {
  path: string;
  a?: unknown;
  b?: unknown;
}

/** Leaf values of a JSON value by dotted path; empty objects and arrays are leaves. */
export function flattenConfig(value: unknown, prefix = "", out = new Map<string, unknown>()): Map<string, unknown> {
  const entries = Array.isArray(value)
    ? value.map((v, i) => [String(i), v] as const)
    : value !== null && typeof value === "object"
      ? Object.entries(value)
      : null;
  if (entries === null || entries.length === 0) {
    out.set(prefix, value);
    return out;
  }
  for (const [k, v] of entries) flattenConfig(v, prefix ? `${prefix}.${k}` : k, out);
  return out;
}

/** The fields where `a` and `b` differ. */
export function diffConfigs(a: unknown, b: unknown): ConfigChange[] {
  const fa = flattenConfig(a);
  const fb = flattenConfig(b);
  const paths = [...new Set([...fa.keys(), ...fb.keys()])].sort();
  const changes: ConfigChange[] = [];
  for (const path of paths) {
    const va = fa.get(path);
    const vb = fb.get(path);
    if (fa.has(path) && fb.has(path) && JSON.stringify(va) === JSON.stringify(vb)) continue;
    changes.push({ path, ...(fa.has(path) ? { a: va } : {}), ...(fb.has(path) ? { b: vb } : {}) });
  }
  return changes;
}
