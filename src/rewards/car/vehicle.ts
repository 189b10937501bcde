/**
 * The kinematic single-track ("bicycle") car in the Frenet frame of the racing line, integrated with RK4
 * (rewards spec §11.4, `plant: "kinematic"`; race_stack NUC2 geometry).
 *
 *   ṡ = v cos α / (1 − κ(s) n)     ṅ = v sin α     α̇ = v tan δ / (l_f + l_r) − κ(s) ṡ     v̇ = a     δ̇ = (δ_cmd − δ) / τ
 *
 * The plant adds what the controller's model leaves out: an understeer gradient (the yaw rate is
 * v tan δ / (L (1 + K v²)), K = 0.004 s²/m², standing in for tyre slip so that tracking is not trivially exact),
 * the steering limit |δ| ≤ 0.4 rad, and the motor's acceleration limit [−3, 3] m/s². The first-order steering lag
 * (τ = 0.1578 s) is in both plant and model. Departure from the spec: the dynamic Pacejka plant is not
 * implemented; this kinematic plant is the spec's cheaper option.
 */
import { lookup, type Track } from "./track.js";

/** Car geometry and actuator limits (race_stack NUC2). */
export const CAR = {
  lf: 0.162,
  lr: 0.145,
  wheelbase: 0.307,
  /** Footprint used for wall contact (m). */
  length: 0.5,
  width: 0.3,
  steerTau: 0.1578,
  maxSteer: 0.4,
  /** Steering-rate limit of the controller (rad/s): 0.2 rad per 50 ms control step. */
  maxSteerRate: 4,
  aMin: -3,
  aMax: 3,
  /** Understeer gradient of the plant (s²/m²): the yaw rate is v tan δ / (L (1 + K v²)). */
  understeer: 0.004,
} as const;

/** The plant's yaw-rate curvature for steering δ at speed v (what the controller's model calls tan δ / L). */
export function plantCurvature(v: number, delta: number): number {
  return Math.tan(delta) / (CAR.wheelbase * (1 + CAR.understeer * v * v));
}

/** Plant state: arc length s, lateral offset n, heading error α, speed v, steering angle δ. */
export interface CarState {
  s: number;
  n: number;
  alpha: number;
  v: number;
  delta: number;
}

/** Plant input: commanded acceleration and steering angle. */
export interface CarInput {
  accel: number;
  steer: number;
}

/** Progress rate ṡ along the racing line. */
export function progressRate(track: Track, x: CarState): number {
  const kappa = lookup(track, track.kappa, x.s);
  return (x.v * Math.cos(x.alpha)) / (1 - kappa * x.n);
}

function deriv(track: Track, x: CarState, accel: number, steer: number): CarState {
  const kappa = lookup(track, track.kappa, x.s);
  const sDot = (x.v * Math.cos(x.alpha)) / (1 - kappa * x.n);
  return {
    s: sDot,
    n: x.v * Math.sin(x.alpha),
    alpha: x.v * plantCurvature(x.v, x.delta) - kappa * sDot,
    v: accel,
    delta: (steer - x.delta) / CAR.steerTau,
  };
}

function axpy(x: CarState, k: CarState, h: number): CarState {
  return {
    s: x.s + h * k.s,
    n: x.n + h * k.n,
    alpha: x.alpha + h * k.alpha,
    v: x.v + h * k.v,
    delta: x.delta + h * k.delta,
  };
}

/** One RK4 step of the plant over dt with the input held (clamped to the actuator limits). */
export function stepPlant(track: Track, x: CarState, u: CarInput, dt: number): CarState {
  const accel = Math.min(CAR.aMax, Math.max(CAR.aMin, u.accel));
  const steer = Math.min(CAR.maxSteer, Math.max(-CAR.maxSteer, u.steer));
  const k1 = deriv(track, x, accel, steer);
  const k2 = deriv(track, axpy(x, k1, dt / 2), accel, steer);
  const k3 = deriv(track, axpy(x, k2, dt / 2), accel, steer);
  const k4 = deriv(track, axpy(x, k3, dt), accel, steer);
  const h = dt / 6;
  return {
    s: x.s + h * (k1.s + 2 * k2.s + 2 * k3.s + k4.s),
    n: x.n + h * (k1.n + 2 * k2.n + 2 * k3.n + k4.n),
    alpha: x.alpha + h * (k1.alpha + 2 * k2.alpha + 2 * k3.alpha + k4.alpha),
    v: x.v + h * (k1.v + 2 * k2.v + 2 * k3.v + k4.v),
    delta: Math.min(
      CAR.maxSteer,
      Math.max(-CAR.maxSteer, x.delta + h * (k1.delta + 2 * k2.delta + 2 * k3.delta + k4.delta)),
    ),
  };
}

/** True when the car's footprint touches a wall (or the state left the region where the Frenet frame is valid). */
export function hitsWall(track: Track, x: CarState): boolean {
  if (!Number.isFinite(x.s) || !Number.isFinite(x.n) || !Number.isFinite(x.alpha) || !Number.isFinite(x.v)) return true;
  const reach = (CAR.width / 2) * Math.abs(Math.cos(x.alpha)) + (CAR.length / 2) * Math.abs(Math.sin(x.alpha));
  const dl = lookup(track, track.dLeft, x.s);
  const dr = lookup(track, track.dRight, x.s);
  return x.n + reach > dl || x.n - reach < -dr;
}
