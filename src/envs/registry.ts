/**
 * The environment registry: an open set of named environment factories that rejects duplicates (STYLE.md). A task
 * names the environment that drives its episodes (`Task.environment`); the episode loop builds it from here with
 * the task's options. Built-in environments register themselves in ./index.ts.
 */
import { ConfigError } from "../util/errors.js";
import type { Environment } from "./types.js";

/** A registrable environment: name, description and a factory over its (validated) options. */
export interface EnvironmentDefinition {
  /** Registry name, kebab-case. */
  name: string;
  /** One line describing it. */
  description: string;
  /** Builds the environment; invalid options throw a ConfigError naming the field. */
  create(options: unknown): Environment<any>;
}

const defs = new Map<string, EnvironmentDefinition>();

/** Adds an environment; throws if the name is taken or not kebab-case. */
export function registerEnvironment(def: EnvironmentDefinition): EnvironmentDefinition {
  if (!/^[a-z][a-z0-9-]*$/.test(def.name)) throw new ConfigError(`environment name "${def.name}" must be kebab-case`);
  if (defs.has(def.name)) throw new ConfigError(`environment "${def.name}" is already registered`);
  defs.set(def.name, def);
  return def;
}

/** Builds the environment `name` with `options`; the error lists the known names. */
export function getEnvironment(name: string, options: unknown = {}): Environment<any> {
  const d = defs.get(name);
  if (!d) throw new ConfigError(`unknown environment "${name}"; known: ${[...defs.keys()].sort().join(", ")}`);
  return d.create(options);
}

/** True when `name` is registered. */
export function hasEnvironment(name: string): boolean {
  return defs.has(name);
}
