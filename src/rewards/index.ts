/**
 * The rewards layer: contract, registry and every built-in checker. Importing this module registers the built-in
 * rewards in the process-wide registry (`rewards`). Each reward family adds one line below; families in their own
 * folders register themselves when imported.
 */
import { rewards } from "./registry.js";
import type { RewardSpec } from "./types.js";
import { mathAnswerReward } from "./math/reward.js";
import { formatTagsReward } from "./format.js";
import { cosineLengthReward, overlongReward } from "./length.js";
import { boxDetectionReward, classMatchReward } from "./boxes.js";
import { groundedQaReward, temporalIouReward, trackingIouReward, videoMcqReward } from "./video.js";
import { sudokuReward } from "./sudoku.js";
import { kgAnswerReward } from "./kg-answer.js";
import { conductorPlanReward } from "./plan.js";

export * from "./types.js";
export * from "./registry.js";
export * from "./text/region.js";
export * from "./mix.js";
export * from "./math/index.js";
export * from "./format.js";
export * from "./length.js";
export * from "./boxes.js";
export * from "./map.js";
export * from "./video.js";
export * from "./sudoku.js";
export * from "./kg-answer.js";
export * from "./plan.js";
export * from "./sandbox/index.js";
export * from "./solver/index.js";
export * from "./kernel/index.js";
export * from "./car/index.js";

/** The text-checkable built-in rewards (the other families register themselves on import). */
export const textRewards: RewardSpec<any, any>[] = [
  mathAnswerReward,
  formatTagsReward,
  cosineLengthReward,
  overlongReward,
  boxDetectionReward,
  classMatchReward,
  temporalIouReward,
  trackingIouReward,
  videoMcqReward,
  groundedQaReward,
  sudokuReward,
  kgAnswerReward,
  conductorPlanReward,
];

for (const spec of textRewards) if (!rewards.has(spec.name)) rewards.register(spec);
