/**
 * The text-checkable reward families (maths, format, length, boxes/classes/mAP, video, sudoku, knowledge-graph
 * answers, Conductor plans, the room world's verifier): their exports, and their registration in the process-wide registry on import. Tests and
 * light callers can import this module instead of index.ts, which also loads the sandboxed families.
 */
import { rewards } from "./registry.js";
import type { RewardSpec } from "./types.js";
import { mathAnswerReward } from "./math/reward.js";
import { formatTagsReward } from "./format.js";
import { cosineLengthReward, overlongReward } from "./length.js";
import { boxDetectionReward, classMatchReward } from "./boxes.js";
import { boxGroundingReward } from "./grounding.js";
import { groundedQaReward, temporalIouReward, trackingIouReward, videoMcqReward } from "./video.js";
import { sudokuReward } from "./sudoku.js";
import { kgAnswerReward } from "./kg-answer.js";
import { conductorPlanReward } from "./plan.js";
import { worldGoalReward } from "./world/reward.js";

export * from "./types.js";
export * from "./registry.js";
export * from "./text/region.js";
export * from "./mix.js";
export * from "./math/index.js";
export * from "./format.js";
export * from "./length.js";
export * from "./boxes.js";
export * from "./grounding.js";
export * from "./map.js";
export * from "./video.js";
export * from "./sudoku.js";
export * from "./kg-answer.js";
export * from "./plan.js";
export * from "./world/index.js";

/** The text-checkable built-in rewards, registered on import. */
export const textRewards: RewardSpec<any, any>[] = [
  mathAnswerReward,
  formatTagsReward,
  cosineLengthReward,
  overlongReward,
  boxDetectionReward,
  classMatchReward,
  boxGroundingReward,
  temporalIouReward,
  trackingIouReward,
  videoMcqReward,
  groundedQaReward,
  sudokuReward,
  kgAnswerReward,
  conductorPlanReward,
  worldGoalReward,
];

for (const spec of textRewards) if (!rewards.has(spec.name)) rewards.register(spec);
