/**
 * The `rlvr` command. Thin: each subcommand parses its flags, calls the library and reports. Subcommands live
 * one per file in ./commands and register themselves on the program here.
 */
import { Command } from "commander";
import { commands } from "./commands/index.js";

/** Builds the program with every subcommand registered. */
export function buildProgram(): Command {
  const program = new Command("rlvr")
    .description("Reinforcement learning with verifiable rewards")
    .version("0.1.0")
    .showHelpAfterError();
  for (const register of commands) register(program);
  return program;
}

/** Runs the CLI on `argv` (as in process.argv). */
export async function main(argv: string[]): Promise<void> {
  await buildProgram().parseAsync(argv);
}
