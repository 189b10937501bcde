/** The room world of SIMA 2 in miniature: state and commands, observations, goals and verifiers, the episode rules, the solver and the "world-goal" reward. */
export * from "./world.js";
export * from "./render.js";
export * from "./goal.js";
export * from "./episode.js";
export * from "./solve.js";
export * from "./reward.js";
