/**
 * The reward registry: an open set of named rewards that rejects duplicates. Every checker registers itself here
 * so `rlvr rewards` can list them with their descriptions and option schemas, and tasks can refer to them by name.
 */
import type { RewardInput, RewardResult, RewardSpec } from "./types.js";

/** A registry of reward specs keyed by name. */
export class RewardRegistry {
  private readonly specs = new Map<string, RewardSpec<any, any>>();

  /** Adds a reward; throws if the name is taken. */
  register<O, G>(spec: RewardSpec<O, G>): RewardSpec<O, G> {
    if (this.specs.has(spec.name)) throw new Error(`reward "${spec.name}" is already registered`);
    this.specs.set(spec.name, spec);
    return spec;
  }

  /** Looks a reward up by name; the error lists the known names. */
  get(name: string): RewardSpec<any, any> {
    const spec = this.specs.get(name);
    if (!spec) throw new Error(`unknown reward "${name}"; known: ${[...this.specs.keys()].sort().join(", ")}`);
    return spec;
  }

  has(name: string): boolean {
    return this.specs.has(name);
  }

  /** All registered rewards, sorted by name. */
  list(): RewardSpec<any, any>[] {
    return [...this.specs.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Scores with a named reward after validating options through its schema. A checker that throws yields an
   * unscorable result with the error in `info`, never an exception, so one bad completion cannot stop a run.
   */
  async score(name: string, input: RewardInput, options: unknown = {}): Promise<RewardResult> {
    const spec = this.get(name);
    const opts = spec.options.parse(options ?? {});
    try {
      return await spec.score(input, opts);
    } catch (err) {
      return { score: null, terms: {}, info: { error: err instanceof Error ? err.message : String(err) } };
    }
  }
}

/** The process-wide registry that built-in rewards add themselves to. */
export const rewards = new RewardRegistry();
