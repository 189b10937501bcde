/** Maths final-answer checker: public entry points. */
export {
  verifyMath,
  parseAnswer,
  checkMath,
  parseGold,
  mathOptions,
  mathAnswerReward,
  type MathOptions,
  type MathGold,
  type AnswerParse,
  type MathCheck,
} from "./reward.js";
export { parseAnswerString, normalizeAnswer, type ParsedAnswer } from "./normalize.js";
export { compareAnswers, type CompareOptions, type CompareResult } from "./compare.js";
export { extractAnswer, boxedCandidates, type Candidate, type ExtractMode } from "./extract.js";
export { show as showMath, type MathNode } from "./ast.js";
export { MATH_WORK_LIMIT, Work, WorkLimitExceeded } from "./budget.js";
