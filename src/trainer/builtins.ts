/**
 * Makes sure the reward checkers that the built-in tasks name ("math-answer", "format-tags") are in the reward
 * registry before anything is scored. Guarded, so it is harmless when the rewards layer registers them itself.
 */
import { rewards } from "../rewards/registry.js";
import { mathAnswerReward } from "../rewards/math/reward.js";
import { formatTagsReward } from "../rewards/format.js";
import type { RewardSpec } from "../rewards/types.js";
import "../tasks/index.js";

for (const spec of [mathAnswerReward, formatTagsReward] as RewardSpec<any, any>[]) if (!rewards.has(spec.name)) rewards.register(spec);

/** Names of the rewards registered so far (for messages). */
export function registeredRewards(): string[] {
  return rewards.list().map((r) => r.name);
}
