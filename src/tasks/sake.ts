/**
 * "sake": SAKE's knowledge-graph questions (concept card, SAKE part; docs/multi-turn.md). A question asks whether a
 * drug treats or causes a disease, and the fact asked is held out of the graph, so it is answered by analogy from
 * similar concepts' triplets, in three model turns with two tool calls (the "kg-tools" environment):
 *
 *   Q: does kato treat vemin?
 *   <entities>kato; vemin</entities>      → tool 1: each entity's group of most similar concepts
 *   <groups>kato; vemin</groups>          → tool 2: the triplets linking the kept groups
 *   <think>bisa treats vemin</think>
 *   <answer>yes</answer>
 *
 * The reward is `kg-answer` (format of the three turns + exact match) with its presets 0.3/0.7 (`sake3b`) and
 * 0.2/0.8 (`sake7b`); `em` (weight 0) is logged and decides pass@k. Held-out questions are about drugs never asked
 * about in training (`entitySplit`). Gold trajectories (for the SFT warm start) are the full transcripts, tool
 * output included, built by the same tool functions the environment calls; `goldSegments` cuts them into the three
 * model turns and the two inserted tool answers, so SFT trains the turns and masks the tool output (the policy never
 * has to produce it). Answers are balanced yes/no.
 */
import { z } from "zod";
import { ConfigError } from "../util/errors.js";
import { Rng } from "../util/rng.js";
import type { KgGold } from "../rewards/kg-answer.js";
import { defineTask } from "./define-task.js";
import type { TaskDefinition } from "./registry.js";
import type { Example, GoldSegment, Task } from "./types.js";
import {
  buildGraph,
  entitySplit,
  kgGraphOptions,
  linkingTriplets,
  renderGroups,
  renderTriplets,
  similarGroup,
  type KnowledgeGraph,
  type Relation,
  type Triplet,
} from "./sake-graph.js";

/** Options of "sake". */
export const sakeOptions = z
  .object({
    graph: kgGraphOptions.prefault({}),
    preset: z.enum(["sake3b", "sake7b"]).default("sake3b").describe("kg-answer weights: 0.3/0.7 or 0.2/0.8"),
    synonymRate: z.number().min(0).max(1).default(0.25).describe("share of questions naming a concept by synonym"),
    maxTurns: z.number().int().min(1).max(10).default(3).describe("model turns before a loop of calls is cut"),
    filterTurn: z
      .boolean()
      .default(true)
      .describe("false: SAKE's ablation without the filtering turn (two model turns; tool 1 returns the triplets too)"),
    maxTokensPerTurn: z.number().int().min(8).default(96).describe("tokens in one model turn"),
  })
  .strict();
/** Parsed "sake" options. */
export type SakeOptions = z.output<typeof sakeOptions>;

/** One question before rendering. */
export interface SakeQuestion {
  drug: string;
  rel: "treats" | "causes";
  disease: string;
  yes: boolean;
}

const VERB = { treats: "treat", causes: "cause" } as const;

/**
 * The triplet the tools show for a question: the first of tool 2's answer (groups of the drug and the disease, at
 * most `maxTriplets`) with the question's relation, or undefined when the answer shows none.
 */
function evidenceOf(graph: KnowledgeGraph, q: SakeQuestion) {
  return evidenceIn(linkingTriplets(graph, [similarGroup(graph, q.drug), similarGroup(graph, q.disease)]), q);
}

/** The first of tool 2's triplets `links` with the question's relation. */
const evidenceIn = (links: readonly Triplet[], q: SakeQuestion) => links.find((t) => t.rel === (q.rel as Relation));

/**
 * Every answerable question of a split: the held facts of its drugs (yes) and cross-family pairs (no), each kept only
 * when what the tools show agrees with its answer: a yes needs a linking triplet with its relation, a no needs none.
 * A yes whose analogy the tools cannot show (the drug's group and the disease's group share no such link, or the
 * link falls past `maxTriplets`) would be label noise: the gold transcript would read "no treats link" and answer
 * yes, and no policy could earn it but by guessing.
 */
function questions(graph: KnowledgeGraph, split: "train" | "test"): { yes: SakeQuestion[]; no: SakeQuestion[] } {
  const drugs = [...graph.concepts.values()].filter((c) => c.type === "drug" && entitySplit(c.name) === split);
  const diseases = [...graph.concepts.values()].filter((c) => c.type === "disease");
  const yes: SakeQuestion[] = [];
  const no: SakeQuestion[] = [];
  for (const d of drugs) {
    for (const rel of ["treats", "causes"] as const) {
      const fact = graph.held.find((t) => t.head === d.name && t.rel === rel)!;
      yes.push({ drug: d.name, rel, disease: fact.tail, yes: true });
      const target = graph.concepts.get(fact.tail)!.cluster; // the family this drug's class treats (or causes)
      for (const y of diseases) if (y.cluster !== target) no.push({ drug: d.name, rel, disease: y.name, yes: false });
    }
  }
  return {
    yes: yes.filter((q) => evidenceOf(graph, q) !== undefined),
    no: no.filter((q) => evidenceOf(graph, q) === undefined),
  };
}

/** The question as an example: prompt (names or synonyms), gold and the gold trajectory. */
function toExample(
  graph: KnowledgeGraph,
  q: SakeQuestion,
  id: string,
  rng: Rng,
  synonymRate: number,
  filterTurn = true,
): Example<KgGold> {
  const nameOf = (n: string) => {
    const syn = graph.concepts.get(n)!.synonyms;
    return syn.length && rng.random() < synonymRate ? rng.choice(syn) : n;
  };
  const x = nameOf(q.drug);
  const y = nameOf(q.disease);
  const goldSegments = goldSegmentsOf(graph, x, y, q, filterTurn);
  return {
    id,
    prompt: `Q: does ${x} ${VERB[q.rel]} ${y}?\n`,
    gold: { answers: [q.yes ? "yes" : "no"] },
    goldCompletion: goldSegments.map((s) => s.text).join(""),
    goldSegments,
  };
}

/** The full gold transcript: three model turns with the two tools' exact answers between them. */
export function goldTrajectory(graph: KnowledgeGraph, x: string, y: string, q: SakeQuestion): string {
  return goldSegmentsOf(graph, x, y, q)
    .map((s) => s.text)
    .join("");
}

/**
 * The gold transcript as segments: model turns (trained by SFT) and the tools' answers (inserted, masked). Without
 * the filtering turn, tool 1's answer carries the linking triplets and the model answers in its second turn.
 */
export function goldSegmentsOf(
  graph: KnowledgeGraph,
  x: string,
  y: string,
  q: SakeQuestion,
  filterTurn = true,
): GoldSegment[] {
  const gx = similarGroup(graph, q.drug);
  const gy = similarGroup(graph, q.disease);
  const links = linkingTriplets(graph, [gx, gy]);
  const evidence = evidenceIn(links, q);
  const think = evidence ? `${evidence.head} ${evidence.rel} ${evidence.tail}` : `no ${q.rel} link`;
  const groups = renderGroups([
    { entity: x, members: gx },
    { entity: y, members: gy },
  ]);
  const answer: GoldSegment = {
    kind: "model",
    text: `<think>${think}</think>\n<answer>${q.yes ? "yes" : "no"}</answer>`,
  };
  const entities: GoldSegment = { kind: "model", text: `<entities>${x}; ${y}</entities>` };
  if (!filterTurn) return [entities, { kind: "inserted", text: groups + renderTriplets(links) }, answer];
  return [
    entities,
    { kind: "inserted", text: groups },
    { kind: "model", text: `<groups>${x}; ${y}</groups>` },
    { kind: "inserted", text: renderTriplets(links) },
    answer,
  ];
}

const sake = defineTask<KgGold, SakeOptions>({
  name: "sake",
  summary: "SAKE knowledge-graph questions: 3 model turns, 2 tool calls (kg-tools), kg-answer reward",
  options: sakeOptions,
  build: (o) => ({
    description: `SAKE KG analogy questions (${o.preset}; ${o.graph.drugClasses} drug classes)`,
    terms: [
      { name: "kg", reward: "kg-answer", weight: 1, options: { preset: o.preset, filterTurn: o.filterTurn } },
      {
        name: "em",
        reward: "kg-answer",
        weight: 0,
        options: { formatWeight: 0, answerWeight: 1, filterTurn: o.filterTurn },
      },
    ],
    correctTerm: "em",
    stop: ["</answer>"],
    maxNewTokens: 320,
    environment: {
      name: "kg-tools",
      options: {
        graph: o.graph,
        maxTurns: o.maxTurns,
        maxTokensPerTurn: o.maxTokensPerTurn,
        filterTurn: o.filterTurn,
      },
    },
    generate(split, count, seed) {
      const graph = buildGraph(o.graph);
      const rng = new Rng(seed).split("sake").split(split);
      const { yes, no } = questions(graph, split);
      rng.shuffle(yes);
      rng.shuffle(no);
      if (split === "test" && count > 2 * yes.length)
        throw new ConfigError(
          `sake: the test split has ${yes.length} yes-questions (held-out drugs); ask for at most ${2 * yes.length} ` +
            "test examples, or grow graph.drugClasses / graph.drugsPerClass",
        );
      const out: Example<KgGold>[] = [];
      for (let i = 0; i < count; i++) {
        const pool = i % 2 === 0 ? yes : no;
        const q = pool[Math.floor(i / 2) % pool.length]!;
        out.push(toExample(graph, q, `sake/${split}/${i}`, rng.split(i), o.synonymRate, o.filterTurn));
      }
      return out;
    },
  }),
});

/** How many held-out questions the test split holds for these options (its yes-questions and as many no). */
export function sakeTestSize(options: z.input<typeof sakeOptions> = {}): number {
  const o = sakeOptions.parse(options);
  return 2 * questions(buildGraph(o.graph), "test").yes.length;
}

/** Builds the "sake" task. */
export const createSakeTask: (options?: Partial<SakeOptions>) => Task<KgGold> = sake.create;

/** Registry definition of "sake". */
export const sakeTask: TaskDefinition<SakeOptions> = sake.definition;
