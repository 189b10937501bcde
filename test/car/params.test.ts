/** Parsing the model's parameter dict (rewards spec §11.2, §11.5): literal grammar, names, aliases, validation. */
import { describe, expect, it } from "vitest";
import { namesScore, parseDictLiteral, readParams, validateParams } from "../../src/rewards/car/params.js";
import { DEFAULT_PARAMS } from "../../src/rewards/car/mpc.js";

const wrap = (dict: string, reasoning = "r") =>
  `<reasoning>${reasoning}</reasoning><answer>new_mpc_params = ${dict}</answer>`;

describe("parseDictLiteral", () => {
  it.each([
    ['{"qv": 1}', [["qv", 1]]],
    [
      "{'qn': -2.5e1, 'qalpha': .5,}",
      [
        ["qn", -25],
        ["qalpha", 0.5],
      ],
    ],
    ['{ "a_max" : +3. }', [["a_max", 3]]],
    ["{}", []],
  ])("parses %s", (text, pairs) => {
    const r = parseDictLiteral(text, 0);
    expect("pairs" in r && r.pairs.map(([k, v]) => [k, v.value])).toEqual(pairs);
  });
  it.each(['{"qv" 1}', '{"qv": 1', "{qv: 1}", '{"qv": 1 2}', '{"qv": }', '{"qv": [1]}', '{"qv": __import__("os")}'])(
    "rejects %s",
    (text) => {
      expect("error" in parseDictLiteral(text, 0)).toBe(true);
    },
  );
  it("keeps words and strings as non-numbers", () => {
    const r = parseDictLiteral('{"qv": NaN, "qn": "fast", "qac": Infinity}', 0);
    expect("pairs" in r && r.pairs.map(([, v]) => v.kind)).toEqual(["word", "string", "word"]);
  });
});

describe("readParams", () => {
  it("reads the last dict of the answer block only", () => {
    const text = `<reasoning>new_mpc_params = {"qv": 1}</reasoning><answer>new_mpc_params = {"qn": 2} then new_mpc_params = {"qn": 3}</answer>`;
    const p = readParams(text);
    expect(p.extracted).toBe(true);
    expect(p.values.qn).toEqual({ kind: "number", value: 3 });
    expect(p.values.qv).toBeUndefined();
  });
  it("§11.5 #6: a dict only in <reasoning> is not read", () => {
    expect(readParams('<reasoning>new_mpc_params = {"qv": 1}</reasoning><answer>none</answer>').extracted).toBe(false);
  });
  it("§11.5 #1: prose only, or no answer block", () => {
    expect(readParams("I would raise qn.").extracted).toBe(false);
    expect(readParams("<answer>raise qn</answer>").extracted).toBe(false);
    expect(readParams('<answer>new_mpc_params = {"qn": 3}').extracted).toBe(false); // no closing tag
  });
  it("§11.5 #5: duplicates, including two spellings of a parameter, are invalid", () => {
    expect(readParams(wrap('{"qv": 5, "q_v": 9}')).extracted).toBe(false);
    expect(readParams(wrap('{"qv": 5, "qv": 9}')).extracted).toBe(false);
  });
  it("caps the answer block at 20,000 chars", () => {
    expect(readParams(wrap('{"qv": 5}', "") + "").extracted).toBe(true);
    expect(readParams(`<answer>${" ".repeat(20_001)}new_mpc_params = {"qv": 5}</answer>`).extracted).toBe(false);
  });
  it("a dict that runs past the answer block is unparseable", () => {
    expect(readParams('<answer>new_mpc_params = {"qv": 5</answer>}').extracted).toBe(false);
  });
});

describe("namesScore", () => {
  it("exact names 1, aliases 0.5, unknown and substring keys 0 (D-R5)", () => {
    expect(namesScore(readParams(wrap('{"qv": 1, "qn": 2}')))).toBe(1);
    expect(namesScore(readParams(wrap('{"q_v": 1, "qn": 2}')))).toBe(0.75);
    expect(namesScore(readParams(wrap('{"q": 1, "a": 2}')))).toBe(0); // §11.5 #2
    expect(namesScore(readParams(wrap('{"speed": 1, "qn": 2}')))).toBe(0.5);
  });
  it("an empty dict earns 0 (D-R4)", () => expect(namesScore(readParams(wrap("{}")))).toBe(0));
});

describe("validateParams", () => {
  const vals = (text: string) => readParams(wrap(text)).values;
  it("merges over the defaults; unknown keys never reach the controller", () => {
    const v = validateParams(vals('{"qn": 50, "banana": 3}'), "reject");
    expect(v).toEqual({ ok: true, params: { ...DEFAULT_PARAMS, qn: 50 }, clamped: [] });
  });
  it.each([
    '{"a_max": 1e9}',
    '{"v_max": 1e6}',
    '{"qv": NaN}',
    '{"qv": "fast"}',
    '{"qv": Infinity}',
    '{"qv": 1e999}',
    '{"qv": -1}',
    '{"v_min": 5, "v_max": 4}',
    '{"v_max": 1}',
  ])("§11.5 #3: rejects %s", (text) => expect(validateParams(vals(text), "reject").ok).toBe(false));
  it("clamp mode clamps finite out-of-range numbers but still rejects non-numbers", () => {
    const v = validateParams(vals('{"a_max": 1e9}'), "clamp");
    expect(v.ok && v.params.a_max).toBe(20);
    expect(v.ok && v.clamped).toEqual(["a_max"]);
    expect(validateParams(vals('{"qv": NaN}'), "clamp").ok).toBe(false);
  });
  it("two answer blocks grade nothing (G3, G5: no hedging)", () => {
    expect(
      readParams('<answer>new_mpc_params = {"qn": 3}</answer><answer>new_mpc_params = {"qn": 9}</answer>').extracted,
    ).toBe(false);
  });
});
