/**
 * The sandbox-pool side of a user reward (`sandbox: true`, user-module.ts): a worker process loads the user's module
 * and calls its function once. The pool owns the deadline and kills the process past it, so even a synchronous
 * infinite loop costs only its completion. Options are checked with the module's `options` schema when it has one.
 */
import { importUserModule, issuesText, type UserRewardInput } from "./user-module.js";

/** Calls `exportName` of `file` with the input and options; returns its raw result (checked by the caller). */
export async function runUserReward(args: {
  file: string;
  exportName: string;
  input: UserRewardInput;
  options: unknown;
}): Promise<unknown> {
  const mod = await importUserModule(args.file);
  const fn = mod[args.exportName];
  if (typeof fn !== "function") throw new Error(`${args.file} has no exported function "${args.exportName}"`);
  const schema = mod.options as { safeParse?: (x: unknown) => { success: boolean; data?: unknown; error?: unknown } };
  let opts = args.options;
  if (schema && typeof schema.safeParse === "function") {
    const parsed = schema.safeParse(args.options);
    if (!parsed.success) throw new Error(`invalid options: ${issuesText(parsed.error)}`);
    opts = parsed.data;
  }
  return await (fn as (i: UserRewardInput, o: unknown) => unknown)(args.input, opts);
}
