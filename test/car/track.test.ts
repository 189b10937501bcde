/** Tracks, spline and plant: geometry checked against hand-derived values. */
import { describe, expect, it, vi } from "vitest";
import { getTrack, lookup, toCartesian } from "../../src/rewards/car/track.js";
import { PeriodicSpline } from "../../src/rewards/car/spline.js";
import { CAR, hitsWall, plantCurvature, stepPlant, type CarState } from "../../src/rewards/car/vehicle.js";

describe("PeriodicSpline", () => {
  it("interpolates sin(t) on a periodic grid with its derivatives", () => {
    const M = 64;
    const h = (2 * Math.PI) / M;
    const sp = new PeriodicSpline(
      Array.from({ length: M }, (_, i) => Math.sin(i * h)),
      h,
    );
    for (const t of [0.1, 1.234, 3, 5.9, -0.5, 7]) {
      const [v, d1, d2] = sp.eval(t);
      expect(v).toBeCloseTo(Math.sin(t), 5);
      expect(d1).toBeCloseTo(Math.cos(t), 3);
      expect(d2).toBeCloseTo(-Math.sin(t), 2);
    }
  });
});

describe("tracks", () => {
  it("circle: the racing line is the inner ring 0.4 m from the wall (radius 5.2), κ = 1/5.2", () => {
    const t = getTrack("circle");
    expect(t.length).toBeCloseTo(2 * Math.PI * 5.2, 1);
    for (let i = 0; i < t.count; i += 37) {
      expect(t.kappa[i]).toBeCloseTo(1 / 5.2, 3);
      expect(t.dLeft[i]).toBeCloseTo(0.4, 2);
      expect(t.dLeft[i]! + t.dRight[i]!).toBeCloseTo(2.4, 9);
      expect(Math.hypot(t.x[i]!, t.y[i]!)).toBeCloseTo(5.2, 2);
    }
  });
  it("F: closed, total heading change 2π, walls never closer than 0.4 m to the racing line, κ·d < 1", () => {
    const t = getTrack("F");
    expect(t.length).toBeGreaterThan(70);
    expect(Math.hypot(t.x[0]! - t.x[t.count - 1]!, t.y[0]! - t.y[t.count - 1]!)).toBeLessThan(2 * t.ds);
    expect(t.psi[t.count - 1]! - t.psi[0]!).toBeCloseTo(2 * Math.PI, 1);
    for (let i = 0; i < t.count; i++) {
      expect(t.dLeft[i]).toBeGreaterThan(0.39);
      expect(t.dRight[i]).toBeGreaterThan(0.39);
      const inner = t.kappa[i]! > 0 ? t.dLeft[i]! : t.dRight[i]!;
      expect(Math.abs(t.kappa[i]!) * inner).toBeLessThan(1);
      expect(t.vTarget[i]).toBeGreaterThan(0);
    }
  });
  it("lookup wraps s around the lap and toCartesian offsets along the normal", () => {
    const t = getTrack("circle");
    expect(lookup(t, t.kappa, -1)).toBeCloseTo(lookup(t, t.kappa, t.length - 1), 12);
    const [x, y] = toCartesian(t, 0, 0.5); // start is (0, -5.2) heading +x; left normal points to +y
    expect(x).toBeCloseTo(0, 2);
    expect(y).toBeCloseTo(-4.7, 2);
  });
  it("is built deterministically (same object per process, same numbers as a fresh build would give)", async () => {
    expect(getTrack("F")).toBe(getTrack("F"));
    // A fresh module instance has an empty cache, so this builds both tracks again from scratch.
    vi.resetModules();
    const fresh = (await import("../../src/rewards/car/track.js")) as typeof import("../../src/rewards/car/track.js");
    for (const name of ["circle", "F"] as const) {
      const a = getTrack(name),
        b = fresh.getTrack(name);
      expect(b).not.toBe(a);
      expect(b).toEqual(a);
    }
  });
});

describe("plant", () => {
  it("steady cornering: the steering that matches κ keeps n and α at 0 (understeer included)", () => {
    const t = getTrack("circle");
    const v = 3;
    const delta = Math.atan((CAR.wheelbase * (1 + CAR.understeer * v * v)) / 5.2);
    expect(plantCurvature(v, delta)).toBeCloseTo(1 / 5.2, 12);
    let x: CarState = { s: 0, n: 0, alpha: 0, v, delta };
    for (let i = 0; i < 200; i++) x = stepPlant(t, x, { accel: 0, steer: delta }, 0.01);
    expect(x.s).toBeCloseTo(2 * v, 1);
    expect(Math.abs(x.n)).toBeLessThan(2e-3);
    expect(Math.abs(x.alpha)).toBeLessThan(2e-3);
  });
  it("clamps acceleration to ±3 m/s² and steering to ±0.4 rad; the lag has time constant τ", () => {
    const t = getTrack("circle");
    let x: CarState = { s: 0, n: 0, alpha: 0, v: 1, delta: 0 };
    x = stepPlant(t, x, { accel: 100, steer: 0 }, 0.1);
    expect(x.v).toBeCloseTo(1.3, 9);
    let y: CarState = { s: 0, n: 0, alpha: 0, v: 0, delta: 0 };
    for (let i = 0; i < 100; i++) y = stepPlant(t, y, { accel: 0, steer: 1 }, 0.001);
    expect(y.delta).toBeCloseTo(0.4 * (1 - Math.exp(-0.1 / CAR.steerTau)), 6);
  });
  it("footprint contact with a wall is a crash", () => {
    const t = getTrack("circle");
    expect(hitsWall(t, { s: 0, n: 0, alpha: 0, v: 1, delta: 0 })).toBe(false);
    expect(hitsWall(t, { s: 0, n: 0.3, alpha: 0, v: 1, delta: 0 })).toBe(true); // 0.3 + 0.15 > 0.4
    expect(hitsWall(t, { s: 0, n: NaN, alpha: 0, v: 1, delta: 0 })).toBe(true);
  });
});
