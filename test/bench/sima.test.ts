/**
 * bench:sima's figures from hand-made evaluations: success per kind, held-out compositions, gains at the start's
 * best decoding (not at a decoding the arm prefers), the unseen kind and the arithmetic change.
 */
import { describe, expect, it } from "vitest";
import { heldOutSuccess, kindTable, seedFigures, successByKind } from "../../bench/sima/metrics.js";
import type { SimaEval } from "../../bench/sima/settings.js";

const evalOf = (pass: number[], byComposition: SimaEval["byComposition"], arithmetic: number): SimaEval => ({
  pass: { T0: pass[0]!, "T0.3": pass[1]!, "T0.6": pass[2]!, T1: pass[3]! },
  byComposition,
  arithmetic,
  turnsMean: 3,
  errorsMean: 0,
});

describe("bench:sima metrics", () => {
  const start = evalOf(
    [0.3, 0.35, 0.25, 0.1],
    {
      "reach:room": { ok: 8, n: 10 },
      "fetch:key": { ok: 1, n: 4 },
      "fetch:ball": { ok: 3, n: 6 },
      "answer:count": { ok: 0, n: 5 },
      "place:ball": { ok: 0, n: 5 },
    },
    0.6,
  );
  const rl = evalOf(
    [0.55, 0.5, 0.4, 0.3],
    {
      "reach:room": { ok: 10, n: 10 },
      "fetch:key": { ok: 2, n: 4 },
      "fetch:ball": { ok: 5, n: 6 },
      "answer:count": { ok: 2, n: 5 },
      "place:ball": { ok: 1, n: 5 },
    },
    0.45,
  );
  const control = evalOf([0.2, 0.3, 0.2, 0.1], {}, 0.6);

  it("pools compositions into kinds", () => {
    expect(successByKind(start.byComposition)).toEqual({ reach: 0.8, fetch: 0.4, answer: 0, place: 0 });
    expect(heldOutSuccess(rl.byComposition, ["place:ball", "answer:colour"])).toBeCloseTo(0.2, 12);
    expect(heldOutSuccess(rl.byComposition, ["answer:colour"])).toBeNaN();
  });

  it("measures gains at the start's best decoding (T0.3 here), and the unseen kind and arithmetic changes", () => {
    const f = seedFigures(start, rl, control, "answer");
    expect(f.decoding).toBe("T0.3");
    expect(f.rl).toBeCloseTo(0.5 - 0.35, 12); // not 0.55 − 0.35: the arm is read at the start's decoding
    expect(f.bestVsBest).toBeCloseTo(0.55 - 0.35, 12);
    expect(f.control).toBeCloseTo(0.3 - 0.35, 12);
    expect(f.unseenKind).toBeCloseTo(0.4, 12);
    expect(f.arithmetic).toBeCloseTo(-0.15, 12);
    expect(kindTable(f.kinds, ["reach", "fetch", "open", "place"])).toEqual([
      "reach     80.0% → 100.0%",
      "fetch     40.0% →  70.0%",
      "answer     0.0% →  40.0%  (not in SFT)",
      "place      0.0% →  20.0%",
    ]);
  });
});
