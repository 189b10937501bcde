/**
 * No real clock in either realm (docs/sandbox.md "The realm a program sees"): every way to read the time that the
 * attack suite and we found answers the fixed instant (programs) or nothing at all (kernels, which have no `Date`),
 * so a run is exactly reproducible. Each variant runs twice, far enough apart that a leaked millisecond would show.
 */
import ivm from "isolated-vm";
import { afterAll, describe, expect, it } from "vitest";
import { closeSharedPool } from "../../src/rewards/sandbox/pool.js";
import { FIXED_TIME_MS, realmScript } from "../../src/rewards/sandbox/realm.js";
import { runInSandbox } from "../../src/rewards/sandbox/run.js";
import { req } from "./helpers.js";

afterAll(() => closeSharedPool());

const MS = "{ hour: 'numeric', minute: 'numeric', second: 'numeric', fractionalSecondDigits: 3, timeZone: 'UTC' }";
const MS_OPTIONS = {
  hour: "numeric",
  minute: "numeric",
  second: "numeric",
  fractionalSecondDigits: 3,
  timeZone: "UTC",
} as const;
/** The fixed instant as the realm should format it (the host's ICU, so its spaces match). */
const AT = (ms: number) => new Intl.DateTimeFormat("en-US", MS_OPTIONS).format(ms);
const PARTS = (ms: number) =>
  new Intl.DateTimeFormat("en-US", MS_OPTIONS)
    .formatToParts(ms)
    .map((p) => p.value)
    .join("");
/** The realm-side expression of the same: the parts joined. */
const JOINED = `new Intl.DateTimeFormat('en-US', ${MS}).formatToParts().map((p) => p.value).join('')`;
const FIXED_ISO = new Date(FIXED_TIME_MS).toISOString();
/** [name, expression that reads a clock, what the fixed instant makes it]. */
const VARIANTS: [string, string, unknown][] = [
  ["Intl.DateTimeFormat().format()", `Intl.DateTimeFormat('en-US', ${MS}).format()`, AT(FIXED_TIME_MS)],
  ["new Intl.DateTimeFormat().formatToParts()", JOINED, PARTS(FIXED_TIME_MS)],
  [
    "the bound format taken off the prototype",
    `Object.getOwnPropertyDescriptor(Intl.DateTimeFormat.prototype, 'format').get.call(new Intl.DateTimeFormat('en-US', ${MS}))()`,
    AT(FIXED_TIME_MS),
  ],
  ["the real Date through a date's constructor", "new (new Date().constructor)().toISOString()", FIXED_ISO],
  ["Date.prototype.constructor.now()", "Date.prototype.constructor.now()", FIXED_TIME_MS],
  [
    "Reflect.construct on the prototype's constructor",
    "Reflect.construct(Object.getPrototypeOf(new Date()).constructor, []).getTime()",
    FIXED_TIME_MS,
  ],
  ["a subclass of Date", "new (class extends Date {})().getTime()", FIXED_TIME_MS],
  [
    "toLocaleString of a new date (worker TZ is UTC)",
    "new Date().toLocaleString('en-US')",
    new Date(FIXED_TIME_MS).toLocaleString("en-US", { timeZone: "UTC" }),
  ],
  ["Date() as a function", "Date() === new Date(" + FIXED_TIME_MS + ").toString()", true],
  ["performance and Temporal", "[typeof performance, typeof Temporal]", ["undefined", "undefined"]],
];

describe("the program realm has only the fixed clock", () => {
  it.each(VARIANTS)("%s", async (_name, expr, want) => {
    const a = await runInSandbox(req(`return ${expr};`));
    expect(a).toMatchObject({ ok: true, value: want });
    // A second run well after the first: a real clock would have moved on by now.
    await new Promise((r) => setTimeout(r, 20));
    const b = await runInSandbox(req(`return ${expr};`));
    expect(b).toMatchObject({ ok: true, value: want });
  });
});

describe("the kernel realm has no clock", () => {
  /** Runs `expr` in a fresh context prepared as js-backend.ts prepares a kernel's (`clock: "none"`). */
  function inKernelRealm(expr: string): unknown {
    const isolate = new ivm.Isolate({ memoryLimit: 32 });
    try {
      const context = isolate.createContextSync();
      context.evalSync(realmScript({ seed: 1, clock: "none", allow: { wasm: true } }));
      return JSON.parse(context.evalSync(`JSON.stringify(${expr})`, { timeout: 5000 }) as string);
    } finally {
      isolate.dispose();
    }
  }
  it.each([
    ["Intl.DateTimeFormat().format()", `Intl.DateTimeFormat('en-US', ${MS}).format()`, AT(FIXED_TIME_MS)],
    ["formatToParts()", JOINED, PARTS(FIXED_TIME_MS)],
    [
      "Date, performance and Temporal",
      "[typeof Date, typeof performance, typeof Temporal]",
      Array(3).fill("undefined"),
    ],
    ["an explicit date still formats", `Intl.DateTimeFormat('en-US', ${MS}).format(86401234)`, AT(86401234)],
    [
      "no clock through WebAssembly either",
      "typeof WebAssembly.Memory === 'function' && !('now' in WebAssembly)",
      true,
    ],
  ])("%s", (_name, expr, want) => {
    expect(inKernelRealm(expr)).toEqual(want);
  });
});
