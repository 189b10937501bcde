/**
 * The task registry: an open set of named task definitions that rejects duplicates (STYLE.md "open sets use a
 * registry"). A definition pairs a zod options schema (difficulty knobs, with defaults) with a factory, so a recipe
 * can say `{ name: "addition", options: { maxDigits: 4 } }` and get a validated, deterministic task.
 * A plain `Task` can be registered too; it then takes no options.
 */
import { z } from "zod";
import { ConfigError } from "../util/errors.js";
import type { Task } from "./types.js";

/** A registrable task: name, description, options schema and a factory. */
export interface TaskDefinition<Options = any> {
  /** Registry name, kebab-case. */
  name: string;
  /** One line describing the task. */
  description: string;
  /** zod schema of the options; defaults live here. */
  options: z.ZodType<Options>;
  /** Builds the task for validated options. */
  create(options: Options): Task<any>;
  /**
   * The options name local resources (files to read, modules to import, models or URLs to call), so the task may be
   * built only from a recipe on this machine, never from a remote request: the reward service refuses it.
   */
  localOnly?: boolean;
}

function isTask(x: TaskDefinition | Task<any>): x is Task<any> {
  return typeof (x as Task).generate === "function";
}

/** A registry of task definitions keyed by name. */
export class TaskRegistry {
  private readonly defs = new Map<string, TaskDefinition>();

  /** Adds a task definition (or a plain task, which takes no options); throws if the name is taken. */
  register(def: TaskDefinition | Task<any>): TaskDefinition {
    const d: TaskDefinition = isTask(def)
      ? { name: def.name, description: def.description, options: z.object({}).strict(), create: () => def }
      : def;
    if (!/^[a-z][a-z0-9-]*$/.test(d.name)) throw new ConfigError(`task name "${d.name}" must be kebab-case`);
    if (this.defs.has(d.name)) throw new ConfigError(`task "${d.name}" is already registered`);
    this.defs.set(d.name, d);
    return d;
  }

  /** The definition registered under `name`; the error lists the known names. */
  definition(name: string): TaskDefinition {
    const d = this.defs.get(name);
    if (!d) throw new ConfigError(`unknown task "${name}"; known: ${this.names().join(", ")}`);
    return d;
  }

  /** Builds the task `name` with `options` validated by its schema (errors name the task and the field). */
  get(name: string, options: unknown = {}): Task<any> {
    const d = this.definition(name);
    const parsed = d.options.safeParse(options ?? {});
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(options)"}: ${i.message}`).join("; ");
      throw new ConfigError(`task "${name}" options: ${issues}`);
    }
    return d.create(parsed.data);
  }

  /** True when `name` is registered. */
  has(name: string): boolean {
    return this.defs.has(name);
  }

  /** Registered names, sorted. */
  names(): string[] {
    return [...this.defs.keys()].sort();
  }

  /** All definitions, sorted by name. */
  list(): TaskDefinition[] {
    return this.names().map((n) => this.defs.get(n)!);
  }
}

/** The process-wide registry that built-in tasks add themselves to. */
export const tasks = new TaskRegistry();

/** Registers a task (definition or plain task) in the process-wide registry; duplicate names throw. */
export function registerTask(def: TaskDefinition | Task<any>): TaskDefinition {
  return tasks.register(def);
}

/** Builds a registered task with validated options. */
export function getTask(name: string, options: unknown = {}): Task<any> {
  return tasks.get(name, options);
}

/** Lists the registered task definitions (name, description, options schema). */
export function listTasks(): TaskDefinition[] {
  return tasks.list();
}
