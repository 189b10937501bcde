/**
 * SAKE knowledge-graph answer reward ("kg-answer", spec §7): `score = wF·format + wA·em`. EM uses the Search-R1
 * normaliser (`volcengine/verl` `search_r1_like_qa_em.py`) plus NFKC and zero-width removal, on the single
 * `<answer>` block of the last model turn. The format term needs every tag pair exactly once in its own turn (turn 1
 * entities, turn 2 groups, turn 3 think+answer); without `turns`, all tags in order in the completion. Tag names and
 * weights are options (0.3/0.7 for the 3B model, preset `sake7b` 0.2/0.8). `filterTurn: false` is SAKE's ablation
 * without the filtering turn: two turns, entities then think+answer. Departures: several answer blocks score 0
 * (Search-R1 takes the last); no sub-EM. Tool outputs are never read: callers pass model turns only.
 */
import { z } from "zod";
import type { RewardResult, RewardSpec } from "./types.js";
import { answerBlock } from "./text/region.js";
import { exactTagFormat } from "./format.js";
import { parseChoice } from "./video.js";

/** Options of the KG answer reward. */
export const kgOptions = z.object({
  preset: z
    .enum(["sake3b", "sake7b"])
    .default("sake3b")
    .describe("term weights: sake3b 0.3/0.7 (paper, 3B), sake7b 0.2/0.8"),
  formatWeight: z.number().min(0).optional().describe("overrides the preset's format weight"),
  answerWeight: z.number().min(0).optional().describe("overrides the preset's answer weight"),
  tags: z
    .object({
      entities: z.string().default("entities"),
      groups: z.string().default("groups"),
      think: z.string().default("think"),
      answer: z.string().default("answer"),
    })
    .default({ entities: "entities", groups: "groups", think: "think", answer: "answer" })
    .describe("tag names per turn"),
  filterTurn: z
    .boolean()
    .default(true)
    .describe(
      "three turns (entities, groups, think+answer); false: the ablation without the filtering turn (two turns)",
    ),
  answerMatcher: z
    .enum(["em", "choice"])
    .default("em")
    .describe("em: normalised exact match; choice: §5.3 multiple choice"),
});
/** Parsed KG options. */
export type KgOptions = z.output<typeof kgOptions>;

/** Gold of the KG reward: accepted answers (gold plus aliases); `options` for multiple choice. */
export interface KgGold {
  answers: string[];
  options?: string[];
}

/** Search-R1 EM normaliser with NFKC and zero-width removal. */
export function normalizeAnswerText(s: string): string {
  return s
    .normalize("NFKC")
    .replace(/[\u200b-\u200d\u2060\ufeff]/g, "")
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, "")
    .replace(/\b(?:a|an|the)\b/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** 1 iff the normalised answer is non-empty and equals a normalised accepted answer. */
export function exactMatch(answer: string, accepted: readonly string[]): number {
  if (answer.length > 4 * Math.max(0, ...accepted.map((g) => g.length)) + 64) return 0; // far longer than any alias
  const a = normalizeAnswerText(answer);
  return a && accepted.some((g) => normalizeAnswerText(g) === a) ? 1 : 0;
}

/** "kg-answer": SAKE format + exact match of the final answer tag. */
export const kgAnswerReward: RewardSpec<KgOptions, KgGold> = {
  name: "kg-answer",
  description:
    "SAKE knowledge-graph answer: weighted format (entities/groups/think/answer tags) + exact match of <answer>",
  options: kgOptions,
  exampleGold: { answers: ["Aspirin", "acetylsalicylic acid"] },
  maxScore: 1,
  score({ completion, gold, turns }, o): RewardResult {
    const wF = o.formatWeight ?? (o.preset === "sake7b" ? 0.2 : 0.3);
    const wA = o.answerWeight ?? (o.preset === "sake7b" ? 0.8 : 0.7);
    if (o.answerMatcher === "em" && !gold.answers.some((g) => normalizeAnswerText(g)))
      return { score: null, terms: {}, info: { reason: "gold answers normalise to empty" } };
    const t = o.tags;
    let format: number;
    let last: string;
    if (turns && turns.length > 0) {
      last = turns[turns.length - 1]!;
      const perTurn = o.filterTurn
        ? [[t.entities], [t.groups], [t.think, t.answer]]
        : [[t.entities], [t.think, t.answer]];
      format = turns.length === perTurn.length && perTurn.every((tags, i) => exactTagFormat(turns[i]!, tags)) ? 1 : 0;
    } else {
      last = completion;
      const tags = o.filterTurn ? [t.entities, t.groups, t.think, t.answer] : [t.entities, t.think, t.answer];
      format = exactTagFormat(completion, tags);
    }
    const answer = answerBlock(last, { tag: t.answer }).text;
    let em = 0;
    if (answer !== null) {
      if (o.answerMatcher === "choice") {
        const options = gold.options ?? [];
        const letter = parseChoice(answer, options);
        em = letter !== null && gold.answers.some((g) => g.trim().replace(/[().]/g, "") === letter) ? 1 : 0;
      } else em = exactMatch(answer, gold.answers);
    }
    return { score: wF * format + wA * em, terms: { format, em }, info: { answer, weights: { format: wF, em: wA } } };
  },
  goldCompletion: (g) =>
    `<entities>\nthe drug\n</entities>\n<groups>\ndrugs\n</groups>\n<think>\nIt is this one.\n</think>\n<answer>${g.answers[0]}</answer>`,
};
