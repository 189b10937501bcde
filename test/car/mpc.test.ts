/** The MPC's condensed QP: the linear prediction matches the nonlinear RK4 rollout, and the QP cost is the MPC cost. */
import { describe, expect, it } from "vitest";
import { buildMpcQp, DEFAULT_PARAMS, modelStep, MPC_DEFAULTS, MpcController } from "../../src/rewards/car/mpc.js";
import { getTrack, lookup } from "../../src/rewards/car/track.js";
import { Rng } from "../../src/util/rng.js";

const track = getTrack("F");
const cfg = MPC_DEFAULTS;
const N = cfg.horizon;
const nv = 2 * N;
const x0 = { s: 20, n: 0.1, alpha: 0.05, v: 4, delta: 0.05 };
const rng = new Rng(3);
const uPrev = Float64Array.from({ length: nv }, (_, i) => (i % 2 === 0 ? 0.5 * rng.normal() : 0.3 * rng.normal()));
const qp = buildMpcQp(track, DEFAULT_PARAMS, cfg, x0, 0.06, uPrev);

function rollout(du: Float64Array): Float64Array {
  const out = new Float64Array((N + 1) * 6);
  out.set([x0.s, x0.n, x0.alpha, x0.v, x0.delta, 0.06]);
  const next = new Float64Array(6);
  for (let k = 0; k < N; k++) {
    modelStep(
      track,
      out.subarray(k * 6, k * 6 + 6),
      qp.ub[2 * k]! + du[2 * k]!,
      qp.ub[2 * k + 1]! + du[2 * k + 1]!,
      cfg.dt,
      next,
    );
    out.set(next, (k + 1) * 6);
  }
  return out;
}

describe("MPC condensed QP", () => {
  it("the nominal trajectory is the rollout of the nominal inputs", () => {
    expect(Array.from(rollout(new Float64Array(nv)))).toEqual(Array.from(qp.xb));
  });
  it("G·δu predicts the rollout of ū + δu to second order", () => {
    for (const scale of [1e-2, 1e-3]) {
      const du = Float64Array.from({ length: nv }, () => scale * rng.normal());
      const exact = rollout(du);
      let maxErr = 0;
      let maxLin = 0;
      for (let k = 0; k < N; k++) {
        for (let i = 0; i < 5; i++) {
          let lin = 0;
          for (let c = 0; c < nv; c++) lin += qp.G[(k * 5 + i) * nv + c]! * du[c]!;
          maxLin = Math.max(maxLin, Math.abs(lin));
          maxErr = Math.max(maxErr, Math.abs(qp.xb[(k + 1) * 6 + i + 1]! + lin - exact[(k + 1) * 6 + i + 1]!));
        }
      }
      expect(maxLin).toBeGreaterThan(scale * 1e-2);
      expect(maxErr).toBeLessThan(20 * scale * scale + 1e-7); // quadratic remainder, not a linear mismatch
    }
  });
  it("½δuᵀPδu + qᵀδu equals the MPC cost of the linear prediction minus the nominal cost", () => {
    const p = DEFAULT_PARAMS;
    const cost = (du: Float64Array) => {
      let J = 0;
      for (let k = 0; k < N; k++) {
        const z = [0, 0, 0, 0, 0].map((_, i) => {
          let v = qp.xb[(k + 1) * 6 + i + 1]!;
          for (let c = 0; c < nv; c++) v += qp.G[(k * 5 + i) * nv + c]! * du[c]!;
          return v;
        });
        const vt = lookup(track, track.vTarget, qp.xb[(k + 1) * 6]!);
        J += p.qn * z[0]! ** 2 + p.qalpha * z[1]! ** 2 + p.qv * (z[2]! - vt) ** 2;
        J += p.qac * (qp.ub[2 * k]! + du[2 * k]!) ** 2 + p.qddelta * (qp.ub[2 * k + 1]! + du[2 * k + 1]!) ** 2;
      }
      return J;
    };
    const { P, q } = qp.problem;
    const du = Float64Array.from({ length: nv }, () => rng.normal());
    let quad = 0;
    for (let a = 0; a < nv; a++) {
      quad += q[a]! * du[a]!;
      for (let b = 0; b < nv; b++) quad += 0.5 * du[a]! * P[a * nv + b]! * du[b]!;
    }
    const reg = 0.5 * 1e-6 * du.reduce((acc, v) => acc + v * v, 0); // the solver's tiny diagonal regulariser
    expect(quad - reg).toBeCloseTo(cost(du) - cost(new Float64Array(nv)), 6);
  });
  it("the controller's first command respects the steering-rate and acceleration bounds", () => {
    const c = new MpcController(track, { ...DEFAULT_PARAMS, a_max: 1.5 }, cfg);
    const step = c.control({ s: 0, n: 0, alpha: 0, v: 0, delta: 0 });
    expect(step.status).not.toBe("nonFinite");
    expect(step.input.accel).toBeLessThanOrEqual(1.5 + 1e-12);
    expect(Math.abs(step.input.steer)).toBeLessThanOrEqual(4 * cfg.dt + 1e-12);
  });
});
