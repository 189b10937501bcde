/**
 * `--set field.path=value` overrides, turned into a nested object that is merged over a recipe. Built safely: a
 * path segment or a key of a parsed value named `__proto__`, `constructor` or `prototype` is refused (writing
 * through one would change `Object.prototype` for the whole process), every object is built with own data
 * properties only, and a malformed pair (no `=`, an empty segment, a value that is not YAML, a path that runs
 * through a value set by an earlier pair) is a ConfigError naming the pair, never a stack trace.
 */
import { parse as parseYaml } from "yaml";
import { ConfigError } from "../util/index.js";

/** Keys that reach an object's prototype machinery instead of one of its own fields. */
const FORBIDDEN = new Set(["__proto__", "constructor", "prototype"]);
/** A field name segment: letters, digits, `_`, `-` (task options and list indices included). */
const SEGMENT = /^[A-Za-z0-9_-]+$/;

/** Turns `--set a.b=1` pairs into a nested override object (values parsed as YAML scalars, lists or maps). */
export function parseSets(sets: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of sets) {
    const fail = (what: string): never => {
      throw new ConfigError(`--set ${JSON.stringify(s)}: ${what}`);
    };
    const eq = s.indexOf("=");
    if (eq < 0) fail("expected field.path=value, e.g. --set train.steps=20");
    const path = s.slice(0, eq).split(".");
    for (const k of path) {
      if (FORBIDDEN.has(k)) fail(`"${k}" is not a recipe field (it would change every object in the process)`);
      if (!SEGMENT.test(k)) {
        fail(
          `field path "${s.slice(0, eq)}" has an empty or invalid segment ${JSON.stringify(k)}; ` +
            "use letters, digits, '_' or '-' between dots",
        );
      }
    }
    const value = parseValue(s.slice(eq + 1), fail);
    let cur = out;
    for (const [i, k] of path.slice(0, -1).entries()) {
      const next = Object.hasOwn(cur, k) ? cur[k] : undefined;
      if (next === undefined) defineField(cur, k, {});
      else if (!isMap(next)) {
        fail(`${path.slice(0, i + 1).join(".")} is already set to ${JSON.stringify(next)} by an earlier --set`);
      }
      cur = cur[k] as Record<string, unknown>;
    }
    defineField(cur, path[path.length - 1]!, value);
  }
  return out;
}

/** The value part as YAML, refusing prototype keys anywhere inside it. */
function parseValue(text: string, fail: (what: string) => never): unknown {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (err) {
    fail(`the value is not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) x.forEach(walk);
    else if (isMap(x)) {
      for (const k of Reflect.ownKeys(x)) {
        if (typeof k === "string" && FORBIDDEN.has(k)) fail(`the value has a key "${k}", which is not allowed`);
        walk((x as Record<string | symbol, unknown>)[k]);
      }
    }
  };
  walk(value);
  return value;
}

/** Sets an own, enumerable data property (never a setter up the prototype chain). */
function defineField(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function isMap(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}
