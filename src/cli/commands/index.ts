/** The list of subcommands; each module exports `register(program)`. Add one line per command file. */
import type { Command } from "commander";

export type RegisterCommand = (program: Command) => void;

export const commands: RegisterCommand[] = [];
