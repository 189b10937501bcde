/** `rlvr tasks [name]`: lists the built-in tasks, or shows a task's options and a few generated examples. */
import type { Command } from "commander";
import { withErrors } from "./train.js";
import { getTask, listTasks, tasks as registry } from "../../tasks/index.js";

/** Registers `tasks`. */
export function register(program: Command): void {
  program
    .command("tasks")
    .description("list tasks, or show one task's reward terms and sample examples")
    .argument("[name]", "task to show")
    .option("--show <n>", "examples to print", (v) => Number(v), 3)
    .option("--split <split>", "train or test", "test")
    .option("--seed <n>", "generator seed", (v) => Number(v), 0)
    .action(
      withErrors((name: string | undefined, o: { show: number; split: "train" | "test"; seed: number }) => {
        if (!name) {
          for (const d of listTasks()) console.log(`${d.name.padEnd(18)} ${d.description}`);
          return;
        }
        const def = registry.definition(name);
        const task = getTask(name);
        console.log(`${task.name}: ${task.description}`);
        console.log(
          `reward terms: ${task.terms.map((t) => `${t.name} (${t.reward}, weight ${t.weight})`).join(", ")}; correctness: ${task.correctTerm}`,
        );
        const shape = (
          def.options as unknown as { _zod?: { def?: { shape?: Record<string, { description?: string }> } } }
        )._zod?.def?.shape;
        if (shape) for (const [k, v] of Object.entries(shape)) console.log(`  option ${k}: ${v.description ?? ""}`);
        for (const e of task.generate(o.split, o.show, o.seed)) {
          console.log(
            `--- ${e.id}\nprompt: ${JSON.stringify(e.prompt)}\ngold completion: ${JSON.stringify(e.goldCompletion)}`,
          );
        }
      }),
    );
}
