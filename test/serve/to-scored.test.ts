/**
 * `toScored` (src/serve/score-items.ts), the wire form of a reward result: its `info` must be exactly what a JSON round
 * trip gives, whether it takes the fast path (plain JSON passed as it is) or the round trip (anything else), and info
 * JSON cannot hold becomes a note instead of an error.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { toScored } from "../../src/serve/score-items.js";

const roundTrip = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

class Point {
  constructor(
    public x: number,
    public y: number,
  ) {}
}

describe("toScored", () => {
  it("gives the JSON round trip of any info, plain or not (property, 300 cases)", () => {
    const odd = fc.constantFrom<unknown>(
      undefined,
      NaN,
      Infinity,
      -0,
      new Date(0),
      new Map([[1, 2]]),
      new Point(1, 2),
      { toJSON: () => "custom" },
      [1, , 3], // a hole
      () => 1,
    );
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(fc.jsonValue({ maxDepth: 2 }), odd),
      node: fc.oneof(
        { depthSize: "small" },
        tie("leaf"),
        fc.array(tie("node"), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 4 }), tie("node"), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), value, { maxKeys: 5 }), (info) => {
        const got = toScored({ score: 1, terms: {}, info }).info;
        expect(JSON.stringify(got)).toBe(JSON.stringify(roundTrip(info)));
        expect(got).toStrictEqual(roundTrip(info));
      }),
      { numRuns: 300, seed: 17 },
    );
  });

  it("passes plain JSON info as it is and copies anything else", () => {
    const plain = { extracted: "7", goldParsed: "7", rule: "numeric", work: 12, nested: [{ a: null, b: true }] };
    expect(toScored({ score: 1, terms: {}, info: plain }).info).toBe(plain);
    const odd = { when: new Date(0), n: NaN };
    const got = toScored({ score: 1, terms: {}, info: odd }).info;
    expect(got).not.toBe(odd);
    expect(got).toEqual({ when: "1970-01-01T00:00:00.000Z", n: null });
  });

  it("answers a note for info that JSON cannot hold (a BigInt, a cycle), and takes the round trip past depth 8", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(toScored({ score: 1, terms: {}, info: { big: 10n } }).info).toEqual({
      unserialisable: expect.stringMatching(/BigInt/),
    });
    expect(toScored({ score: 1, terms: {}, info: cyclic }).info).toEqual({
      unserialisable: expect.stringMatching(/circular/i),
    });
    let deep: unknown = 1;
    for (let i = 0; i < 12; i++) deep = [deep];
    const info = { deep };
    const got = toScored({ score: 1, terms: {}, info }).info;
    expect(got).not.toBe(info);
    expect(got).toEqual(info);
  });
});
