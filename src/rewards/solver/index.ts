/** SIRL solver-checked reward: model API, LP rendering, HiGHS solve and the reward specs (spec §9). */
export {
  sirlReward,
  sirlTermRewards,
  sirlOptions,
  scoreSirl,
  withinTolerance,
  solutionHitRate,
  type SirlGold,
  type SirlOptions,
} from "./reward.js";
export { lpModelSchema, toLpText, PRELUDE as SIRL_MODEL_PRELUDE, type LpModel, type RenderedLp } from "./lp-model.js";
export { solveLp, loadHighs, type SolveOptions, type SolveResult } from "./highs.js";
export {
  codeBlock as sirlCodeBlock,
  formatStrict as sirlFormatStrict,
  formatGraded as sirlFormatGraded,
  type SirlTags,
} from "./completion.js";
