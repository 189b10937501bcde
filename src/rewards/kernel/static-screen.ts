/**
 * Static screen of a kernel's source (rewards spec §10.3 #10, after `ScalingIntelligence/KernelBench`
 * `kernel_static_checker.py`): a regex pass over the source with comments stripped. Advisory: a hit fails fast,
 * but the real guarantees are the runtime checks, since a determined kernel can spell any of these indirectly.
 */

/** Forbidden patterns with the reason each is reported under. */
const RULES: Array<[RegExp, string]> = [
  [/\b(Date|performance|hrtime|setTimeout|setInterval|setImmediate|queueMicrotask)\b/, "clock or timer API"],
  [/\b(SharedArrayBuffer|Atomics)\b/, "shared memory or Atomics"],
  [/\bglobalThis\b|\bself\b|\bwindow\b|\bglobal\b/, "global object access"],
  [/__proto__|\.prototype\b|\bsetPrototypeOf\b|\bdefineProperty\b/, "prototype access"],
  [/\bFunction\s*\(|\beval\s*\(|\bimport\s*\(|\brequire\b|\bimport\s+/, "code loading"],
  [/\b(Worker|MessageChannel|postMessage)\b/, "worker or thread API"],
  [/\b(Proxy|Reflect)\b/, "Proxy or Reflect"],
];

/** Strips // and /* *\/ comments (strings are left as they are; a hit inside a string still fails, by design). */
function stripComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/\/\/[^\n]*/g, " ");
}

/** Returns the reasons the source fails the screen (empty when it passes). */
export function staticScreen(source: string, opts: { allowWasm?: boolean } = {}): string[] {
  const code = stripComments(source);
  const hits = RULES.filter(([re]) => re.test(code)).map(([re, why]) => `${why}: ${code.match(re)?.[0]}`);
  if (!opts.allowWasm && /\bWebAssembly\b/.test(code)) hits.push("WebAssembly is not granted for this task");
  return hits;
}
