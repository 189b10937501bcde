/**
 * SAKE's knowledge graph (docs/multi-turn.md): a seeded, built-in graph in the spirit of UMLS and ConceptNet, and the
 * two deterministic queries behind SAKE's tools. Concepts have types (drug, disease, drug class, disease family),
 * one synonym each (drugs and diseases) and typed relations: `is_a` (drug → class, disease → family), `treats` and
 * `causes` (drug → disease; a drug class treats one disease family and, as an adverse effect, causes another), and
 * `interacts_with` (drug ↔ drug, across classes: distractors).
 *
 * For every drug and each of `treats`/`causes`, one true fact is held out of the graph that the tools see: the
 * "yes" questions ask exactly those facts, so they must be answered by analogy from similar concepts' triplets.
 * Tool 1 (`similarGroup`) returns an entity's group: itself and its most similar concepts of the same type
 * (Jaccard over (relation, neighbour) pairs, ties by name). Tool 2 (`linkingTriplets`) returns the triplets that
 * link two kept groups. Both live here, in the tasks layer, so that the task's gold trajectories are built by the
 * very functions the environment (src/envs/kg) calls. Departure from SAKE: a synthetic graph, not UMLS.
 */
import { z } from "zod";
import { Rng } from "../util/rng.js";
import { splitOf } from "./generate.js";

/** Options of the knowledge-graph generator (part of the SAKE task's options). */
export const kgGraphOptions = z
  .object({
    seed: z.number().int().nonnegative().default(0).describe("graph seed (the graph, not the question order)"),
    drugClasses: z.number().int().min(3).max(20).default(6).describe("drug classes (= disease families)"),
    drugsPerClass: z.number().int().min(3).max(12).default(5).describe("drugs per class"),
    diseasesPerFamily: z.number().int().min(3).max(12).default(4).describe("diseases per family"),
    groupSize: z.number().int().min(2).max(6).default(3).describe("concepts in a tool-1 group (the entity included)"),
    maxTriplets: z.number().int().min(1).max(20).default(6).describe("most triplets tool 2 returns"),
  })
  .strict();
/** Parsed graph options. */
export type KgGraphOptions = z.output<typeof kgGraphOptions>;

export type ConceptType = "drug" | "disease" | "drug_class" | "disease_family";
export type Relation = "treats" | "causes" | "is_a" | "interacts_with";

/** One concept. */
export interface Concept {
  name: string;
  synonyms: string[];
  type: ConceptType;
  /** Class (drugs) or family (diseases) index; the class or family itself for class concepts. */
  cluster: number;
}

/** (head, relation, tail) by concept name. */
export interface Triplet {
  head: string;
  rel: Relation;
  tail: string;
}

/** The generated graph: concepts, the triplets the tools see, and the held-out facts. */
export interface KnowledgeGraph {
  options: KgGraphOptions;
  concepts: Map<string, Concept>;
  /** Synonym or name → canonical name. */
  aliases: Map<string, string>;
  triplets: Triplet[];
  /** One true `treats` and one `causes` fact per drug, absent from `triplets` (the "yes" questions). */
  held: Triplet[];
}

const CONSONANTS = "bdfgklmnprstvz";
const VOWELS = "aeiou";

/** A fresh pronounceable name (2 syllables, optional final consonant) not yet in `taken`. */
function freshName(rng: Rng, taken: Set<string>): string {
  for (;;) {
    let s = "";
    for (let i = 0; i < 2; i++) s += rng.choice([...CONSONANTS]) + rng.choice([...VOWELS]);
    if (rng.random() < 0.5) s += rng.choice([...CONSONANTS]);
    if (!taken.has(s)) {
      taken.add(s);
      return s;
    }
  }
}

const graphCache = new Map<string, KnowledgeGraph>();

/** The graph for `options` (memoised: the task and the environment build the same one). */
export function buildGraph(options: Partial<KgGraphOptions> = {}): KnowledgeGraph {
  const o = kgGraphOptions.parse(options);
  const key = JSON.stringify(o);
  const hit = graphCache.get(key);
  if (hit) return hit;
  const rng = new Rng(o.seed).split("kg-graph");
  const taken = new Set<string>();
  const concepts = new Map<string, Concept>();
  const aliases = new Map<string, string>();
  const add = (type: ConceptType, cluster: number, synonyms: number): string => {
    const name = freshName(rng, taken);
    const syn = Array.from({ length: synonyms }, () => freshName(rng, taken));
    concepts.set(name, { name, synonyms: syn, type, cluster });
    aliases.set(name, name);
    for (const s of syn) aliases.set(s, name);
    return name;
  };
  const K = o.drugClasses;
  const classes = Array.from({ length: K }, (_, k) => add("drug_class", k, 0));
  const families = Array.from({ length: K }, (_, f) => add("disease_family", f, 0));
  const drugs = classes.map((_, k) => Array.from({ length: o.drugsPerClass }, () => add("drug", k, 1)));
  const diseases = families.map((_, f) => Array.from({ length: o.diseasesPerFamily }, () => add("disease", f, 1)));
  // Class k treats family treatOf[k] and causes family causeOf[k] (two different families).
  const perm = rng.shuffle(Array.from({ length: K }, (_, i) => i));
  const treatOf = perm;
  const causeOf = perm.map((_, k) => perm[(k + 1) % K]!);

  const all: Triplet[] = [];
  const held: Triplet[] = [];
  classes.forEach((cls, k) => drugs[k]!.forEach((d) => all.push({ head: d, rel: "is_a", tail: cls })));
  families.forEach((fam, f) => diseases[f]!.forEach((y) => all.push({ head: y, rel: "is_a", tail: fam })));
  for (let k = 0; k < K; k++) {
    for (const [rel, fam] of [
      ["treats", treatOf[k]!],
      ["causes", causeOf[k]!],
    ] as const) {
      const p = rel === "treats" ? 0.7 : 0.5;
      for (const d of drugs[k]!) {
        const facts = diseases[fam]!.filter(() => rng.random() < p);
        if (facts.length < 2) facts.splice(0, facts.length, ...rng.shuffle([...diseases[fam]!]).slice(0, 2));
        const hide = rng.int(facts.length);
        facts.forEach((y, i) => (i === hide ? held : all).push({ head: d, rel, tail: y }));
      }
    }
  }
  // Distractors: each drug interacts with one drug of another class.
  for (let k = 0; k < K; k++) {
    for (const d of drugs[k]!) {
      const other = drugs[(k + 1 + rng.int(K - 1)) % K]!;
      all.push({ head: d, rel: "interacts_with", tail: rng.choice(other) });
    }
  }
  const graph: KnowledgeGraph = { options: o, concepts, aliases, triplets: all, held };
  graphCache.set(key, graph);
  return graph;
}

/** The split a drug's questions belong to: held-out questions are about drugs never asked about in training. */
export function entitySplit(drug: string): "train" | "test" {
  return splitOf(`kg-entity:${drug}`);
}

/** Canonical name of a name or synonym (case and surrounding space ignored), or null when unknown. */
export function resolveEntity(graph: KnowledgeGraph, name: string): string | null {
  return graph.aliases.get(name.trim().toLowerCase()) ?? null;
}

/** (relation, neighbour) pairs of every concept, over the triplets the tools see. */
function neighbourSets(graph: KnowledgeGraph): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>([...graph.concepts.keys()].map((n) => [n, new Set<string>()]));
  for (const t of graph.triplets) {
    out.get(t.head)!.add(`${t.rel}>${t.tail}`);
    out.get(t.tail)!.add(`${t.rel}<${t.head}`);
  }
  return out;
}

const neighbourCache = new WeakMap<KnowledgeGraph, Map<string, Set<string>>>();

/** Tool 1: the entity (canonical name) and its `groupSize − 1` most similar concepts of the same type. */
export function similarGroup(graph: KnowledgeGraph, entity: string): string[] {
  let groups = groupCache.get(graph);
  if (!groups) groupCache.set(graph, (groups = new Map()));
  let group = groups.get(entity);
  if (!group) groups.set(entity, (group = computeGroup(graph, entity)));
  return [...group];
}

/** Tool 1's groups per graph, by entity (a graph is never changed once built). */
const groupCache = new WeakMap<KnowledgeGraph, Map<string, readonly string[]>>();

function computeGroup(graph: KnowledgeGraph, entity: string): string[] {
  const c = graph.concepts.get(entity);
  if (!c) throw new RangeError(`similarGroup: unknown concept "${entity}"`);
  let nb = neighbourCache.get(graph);
  if (!nb) neighbourCache.set(graph, (nb = neighbourSets(graph)));
  const mine = nb.get(entity)!;
  const jaccard = (other: string): number => {
    const theirs = nb!.get(other)!;
    let inter = 0;
    for (const x of mine) if (theirs.has(x)) inter++;
    const union = mine.size + theirs.size - inter;
    return union === 0 ? 0 : inter / union;
  };
  const others = [...graph.concepts.values()]
    .filter((x) => x.type === c.type && x.name !== entity)
    .map((x) => ({ name: x.name, s: jaccard(x.name) }))
    .sort((a, b) => b.s - a.s || (a.name < b.name ? -1 : 1));
  return [entity, ...others.slice(0, graph.options.groupSize - 1).map((x) => x.name)];
}

/** Tool 2: triplets whose head and tail lie in two different kept groups, sorted, at most `maxTriplets`. */
export function linkingTriplets(graph: KnowledgeGraph, groups: readonly (readonly string[])[]): Triplet[] {
  const groupOf = new Map<string, number[]>();
  groups.forEach((g, i) => g.forEach((n) => groupOf.set(n, [...(groupOf.get(n) ?? []), i])));
  const links = graph.triplets.filter((t) => {
    const a = groupOf.get(t.head);
    const b = groupOf.get(t.tail);
    return !!a && !!b && a.some((i) => b.some((j) => i !== j));
  });
  const key = (t: Triplet) => `${t.rel === "interacts_with" ? 1 : 0} ${t.head} ${t.rel} ${t.tail}`;
  return links.sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0)).slice(0, graph.options.maxTriplets);
}

/** Tool 1's answer as text: one line per entity, `name: member member ...`. */
export function renderGroups(groups: readonly { entity: string; members: readonly string[] }[]): string {
  return `\n<info>\n${groups.map((g) => `${g.entity}: ${g.members.join(" ")}`).join("\n")}\n</info>\n`;
}

/** Tool 2's answer as text: one triplet per line, or "none". */
export function renderTriplets(triplets: readonly Triplet[]): string {
  const lines = triplets.length ? triplets.map((t) => `${t.head} ${t.rel} ${t.tail}`) : ["none"];
  return `\n<info>\n${lines.join("\n")}\n</info>\n`;
}
