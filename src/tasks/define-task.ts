/**
 * `defineTask`: the one place that turns a task's parts into a `Task` and its registry `TaskDefinition`.
 *
 * Every built-in task used to repeat the same tail: a `score()` that sums the weighted reward terms through the
 * reward registry, a `generate()` that hands a draw function to `generateExamples` under the task's name, and a
 * registry definition whose `create` re-parses the options. A task now supplies only what differs: its name, the
 * options schema, and a `build(options)` that returns the description, terms, stop strings and either a `draw(rng)`
 * (split by the problem's key, see generate.ts) or its own `generate`. Scoring is `scoreWithTerms` over the
 * task's terms with the example's gold and prompt and the sampler's tokens when given (algorithms spec §8.1).
 */
import type { z } from "zod";
import type { Rng } from "../util/rng.js";
import { generateExamples, type Drawn } from "./generate.js";
import type { TaskDefinition } from "./registry.js";
import { scoreWithTerms } from "./score.js";
import type { Example, Task } from "./types.js";

/** What a task builds for its parsed options: everything of a `Task` but its name and `score`. */
type Common<Gold> = Omit<Task<Gold>, "name" | "score" | "generate">;

/** A task's parts: either a `draw` of one problem (the usual case) or a whole `generate`. */
export type TaskParts<Gold> =
  | (Common<Gold> & { draw(rng: Rng): Drawn<Gold>; generate?: never })
  | (Common<Gold> & { generate(split: "train" | "test", count: number, seed: number): Example<Gold>[]; draw?: never });

/** The input of `defineTask`. */
export interface TaskSpec<Gold, Options> {
  /** Registry and task name, kebab-case; also the prefix of example ids and the split's random stream. */
  name: string;
  /** One line for the registry listing (the built task carries its own, options-specific description). */
  summary: string;
  /** Options schema with the defaults. */
  options: z.ZodType<Options>;
  /** Builds the task's parts for parsed options. */
  build(options: Options): TaskParts<Gold>;
}

/** What `defineTask` returns: the factory and the registry definition. */
export interface DefinedTask<Gold, Options> {
  /** Builds the task; missing options take the schema's defaults, invalid ones throw the schema's error. */
  create(options?: Partial<Options>): Task<Gold>;
  /** Registry entry (`registerTask(definition)`). */
  definition: TaskDefinition<Options>;
}

/** Builds a task's factory and registry definition from its parts; see the file comment. */
export function defineTask<Gold, Options>(spec: TaskSpec<Gold, Options>): DefinedTask<Gold, Options> {
  const create = (options: Partial<Options> = {}): Task<Gold> => {
    const parts = spec.build(spec.options.parse(options));
    const { draw, generate, ...common } = parts;
    const task: Task<Gold> = {
      name: spec.name,
      ...common,
      generate: generate ?? ((split, count, seed) => generateExamples(spec.name, split, count, seed, draw!)),
      score(example, completion, tokens, turns) {
        const input = {
          completion,
          gold: example.gold,
          prompt: example.prompt,
          ...(tokens ? { tokens } : {}),
          ...(turns ? { turns } : {}),
        };
        return scoreWithTerms(common.terms, input);
      },
    };
    return task;
  };
  return {
    create,
    definition: { name: spec.name, description: spec.summary, options: spec.options, create: (o) => create(o) },
  };
}
