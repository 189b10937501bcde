/**
 * Reading the model's MPC parameter dictionary (rewards spec §11.2): the last `new_mpc_params = { … }` inside the
 * single `<answer>…</answer>` block (G3: two answer blocks grade nothing), parsed by a small literal grammar (never evaluated, G4), then matched against the
 * parameter names and the reference's alias table, and validated against the range table.
 *
 * Grammar:  dict  := "{" [ pair ("," pair)* [","] ] "}"      pair := key ":" value
 *           key   := '"' chars '"' | "'" chars "'"           value := number | string | word
 *           number:= [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?      word := [A-Za-z_]+ (NaN, True, …)
 * A string or word value parses (so the dict counts as extracted) but is rejected by validation. Duplicate keys,
 * including two spellings of one parameter, make the dict invalid (not extracted).
 */
import { answerRegion } from "../text/region.js";
import { DEFAULT_PARAMS, PARAM_NAMES, type MpcParams } from "./mpc.js";

/** A parameter name of the dictionary. */
export type ParamName = keyof MpcParams;

/** Allowed range per parameter (spec §11.2; built to contain every default). */
export const PARAM_RANGES: Readonly<Record<ParamName, readonly [number, number]>> = {
  qv: [0, 20],
  qn: [0, 100],
  qalpha: [0, 100],
  qac: [0, 1],
  qddelta: [0, 100],
  alat_max: [0, 20],
  a_min: [-20, 0],
  a_max: [0, 20],
  v_min: [-2, 5],
  v_max: [-1, 12],
  track_safety_margin: [0, 1],
};

/** The reference's alias table (LLMxRobot `train/rl_mpc_train.py` `_parse_mpc_param_name`), exact names removed. */
export const PARAM_ALIASES: Readonly<Record<ParamName, readonly string[]>> = {
  qv: ["q_v", "weight_qv", "param_qv", "weight_q_v", "param_q_v"],
  qn: ["q_n", "weight_qn", "param_qn", "weight_q_n", "param_q_n"],
  qalpha: ["q_alpha", "weight_qalpha", "param_qalpha", "weight_q_alpha", "param_q_alpha"],
  qac: ["q_ac", "weight_qac", "param_qac", "weight_q_ac", "param_q_ac"],
  qddelta: ["q_ddelta", "weight_qddelta", "param_qddelta", "weight_q_ddelta", "param_q_ddelta"],
  alat_max: ["a_lat_max", "weight_alat_max", "param_alat_max", "weight_a_lat_max", "param_a_lat_max"],
  a_min: ["weight_a_min", "param_a_min"],
  a_max: ["weight_a_max", "param_a_max"],
  v_min: ["weight_v_min", "param_v_min"],
  v_max: ["weight_v_max", "param_v_max"],
  track_safety_margin: ["weight_track_safety_margin", "param_track_safety_margin"],
};

const ALIAS_TO_NAME = new Map<string, ParamName>(
  PARAM_NAMES.flatMap((name) => PARAM_ALIASES[name].map((alias) => [alias, name] as [string, ParamName])),
);

/** Caps (G8): the graded region and the number of keys. */
export const PARSE_CAPS = { maxRegionChars: 20_000, maxKeys: 64, maxTokenChars: 200 };

/** A raw literal value. */
export type RawValue =
  { kind: "number"; value: number } | { kind: "string"; value: string } | { kind: "word"; value: string };

/** Parses a dict literal starting at text[start] === "{"; returns its ordered pairs or an error. */
export function parseDictLiteral(
  text: string,
  start: number,
): { pairs: [string, RawValue][]; end: number } | { error: string } {
  let i = start;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const fail = (what: string) => ({ error: `${what} at offset ${i - start}` });
  if (text[i] !== "{") return fail("expected '{'");
  i++;
  const pairs: [string, RawValue][] = [];
  ws();
  if (text[i] === "}") return { pairs, end: i + 1 };
  for (;;) {
    ws();
    const q = text[i];
    if (q !== '"' && q !== "'") return fail("expected a quoted key");
    const close = text.indexOf(q, i + 1);
    if (close < 0 || close - i > PARSE_CAPS.maxTokenChars) return fail("unterminated key");
    const key = text.slice(i + 1, close);
    if (/[\\\n]/.test(key)) return fail("escape or newline in key");
    i = close + 1;
    ws();
    if (text[i] !== ":") return fail("expected ':'");
    i++;
    ws();
    const c = text[i];
    let value: RawValue;
    if (c === '"' || c === "'") {
      const end = text.indexOf(c, i + 1);
      if (end < 0 || end - i > PARSE_CAPS.maxTokenChars) return fail("unterminated string value");
      value = { kind: "string", value: text.slice(i + 1, end) };
      i = end + 1;
    } else {
      const m = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + PARSE_CAPS.maxTokenChars));
      const w = /^[+-]?[A-Za-z_][A-Za-z_0-9]*/.exec(text.slice(i, i + PARSE_CAPS.maxTokenChars));
      if (m) {
        value = { kind: "number", value: Number(m[0]) };
        i += m[0].length;
      } else if (w) {
        value = { kind: "word", value: w[0] };
        i += w[0].length;
      } else return fail("expected a value");
    }
    pairs.push([key, value]);
    if (pairs.length > PARSE_CAPS.maxKeys) return fail(`more than ${PARSE_CAPS.maxKeys} keys`);
    ws();
    if (text[i] === ",") {
      i++;
      ws();
      if (text[i] === "}") return { pairs, end: i + 1 };
      continue;
    }
    if (text[i] === "}") return { pairs, end: i + 1 };
    return fail("expected ',' or '}'");
  }
}

/** How each key of the dict was recognised. */
export type KeyMatch = "exact" | "alias" | "unknown";

/** The outcome of reading a completion's parameter dictionary. */
export interface ParsedParams {
  /** True when a dict was found and parsed without duplicates (the `extraction` term). */
  extracted: boolean;
  /** Keys in order with how each matched (empty when not extracted). */
  keys: { key: string; match: KeyMatch; name?: ParamName }[];
  /** Recognised parameters with their raw values. */
  values: Partial<Record<ParamName, RawValue>>;
  /** Why extraction failed, when it did. */
  error?: string;
}

/** Finds, parses and classifies the last `new_mpc_params = {…}` of the answer block. */
export function readParams(completion: string): ParsedParams {
  const none = (error: string): ParsedParams => ({ extracted: false, keys: [], values: {}, error });
  const r = answerRegion(completion, { mode: "answerTag", maxChars: PARSE_CAPS.maxRegionChars });
  if (r.text === null) return none(r.reason ?? "no answer block");
  const region = r.text;
  const re = /new_mpc_params\s*=\s*\{/g;
  let last = -1;
  for (let m = re.exec(region); m; m = re.exec(region)) last = m.index + m[0].length - 1;
  if (last < 0) return none("no new_mpc_params = {...} in the answer block");
  const parsed = parseDictLiteral(region, last);
  if ("error" in parsed) return none(`unparseable dict: ${parsed.error}`);
  const keys: ParsedParams["keys"] = [];
  const values: ParsedParams["values"] = {};
  const seenKeys = new Set<string>();
  for (const [key, value] of parsed.pairs) {
    if (seenKeys.has(key)) return none(`duplicate key "${key}"`);
    seenKeys.add(key);
    const exact = (PARAM_NAMES as readonly string[]).includes(key) ? (key as ParamName) : undefined;
    const name = exact ?? ALIAS_TO_NAME.get(key);
    if (!name) {
      keys.push({ key, match: "unknown" });
      continue;
    }
    if (values[name] !== undefined) return none(`parameter "${name}" given twice (as "${key}")`);
    values[name] = value;
    keys.push({ key, match: exact ? "exact" : "alias", name });
  }
  return { extracted: true, keys, values };
}

/** The `names` term: (exact + 0.5·alias) / #keys; an empty dict earns 0 (D-R4), substrings earn nothing (D-R5). */
export function namesScore(parsed: ParsedParams): number {
  if (!parsed.extracted || parsed.keys.length === 0) return 0;
  const credit = parsed.keys.reduce((acc, k) => acc + (k.match === "exact" ? 1 : k.match === "alias" ? 0.5 : 0), 0);
  return credit / parsed.keys.length;
}

/** Result of validating the recognised values into a full parameter set. */
export type Validated = { ok: true; params: MpcParams; clamped: ParamName[] } | { ok: false; reason: string };

/**
 * Merges the recognised values over the defaults. Non-numbers and non-finite numbers are always rejected;
 * out-of-range numbers are rejected (`"reject"`) or clamped (`"clamp"`); v_min > v_max is rejected either way.
 */
export function validateParams(values: ParsedParams["values"], outOfRange: "reject" | "clamp"): Validated {
  const params: MpcParams = { ...DEFAULT_PARAMS };
  const clamped: ParamName[] = [];
  for (const name of PARAM_NAMES) {
    const raw = values[name];
    if (raw === undefined) continue;
    if (raw.kind !== "number" || !Number.isFinite(raw.value))
      return { ok: false, reason: `${name}: not a finite number (${raw.value})` };
    const [lo, hi] = PARAM_RANGES[name];
    let v = raw.value;
    if (v < lo || v > hi) {
      if (outOfRange === "reject") return { ok: false, reason: `${name}=${v} outside [${lo}, ${hi}]` };
      v = Math.min(hi, Math.max(lo, v));
      clamped.push(name);
    }
    params[name] = v;
  }
  if (params.v_min > params.v_max) return { ok: false, reason: `v_min=${params.v_min} > v_max=${params.v_max}` };
  return { ok: true, params, clamped };
}

/** Formats a parameter set as the dict line a completion carries (only the given keys, in reference order). */
export function formatParams(params: Partial<MpcParams>): string {
  const parts = PARAM_NAMES.filter((n) => params[n] !== undefined).map((n) => `"${n}": ${params[n]}`);
  return `new_mpc_params = {${parts.join(", ")}}`;
}
