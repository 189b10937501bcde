/** The simulated MPC racing car (RobotxR1 twin): track, vehicle, QP-based MPC, behaviours, parameter parsing, rewards. */
export * from "./track.js";
export * from "./spline.js";
export * from "./qp.js";
export * from "./vehicle.js";
export * from "./mpc.js";
export * from "./simulate.js";
export * from "./behaviours.js";
export * from "./params.js";
export * from "./evaluate.js";
export * from "./reward.js";
export * from "./plot.js";
