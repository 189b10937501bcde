/** Shared fixtures of the dataset tests: tiny JSONL/Parquet files, a user reward module and a tiny recipe. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getTask } from "../../src/tasks/index.js";
import { verlRow, writeVerlParquet, type VerlRow } from "../../src/tasks/dataset/index.js";

/** A fresh temporary folder. */
export function tmp(prefix = "rlvr-data-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** `n` one-digit additions as JSONL rows `{question, answer}` (sums are hand-checkable: "a+b=" → a+b). */
export function additionRows(n: number): { question: string; answer: string }[] {
  return Array.from({ length: n }, (_, i) => {
    const a = i % 10;
    const b = Math.floor(i / 10) % 10;
    return { question: `${a}+${b}=`, answer: String(a + b) };
  });
}

/** Writes rows as JSONL. */
export function writeJsonl(path: string, rows: unknown[]): string {
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return path;
}

/** verl rows of the built-in "addition" task (1 digit), both splits. */
export function additionVerlRows(train = 40, test = 8): VerlRow[] {
  const task = getTask("addition", { maxDigits: 1 });
  return [
    ...task.generate("train", train, 0).map((e, i) => verlRow("addition", "train", i, e)),
    ...task.generate("test", test, 0).map((e, i) => verlRow("addition", "test", i, e)),
  ];
}

/** Writes a verl Parquet file of addition rows. */
export function writeAdditionParquet(path: string, train = 40, test = 8): string {
  writeVerlParquet(path, additionVerlRows(train, test));
  return path;
}

/**
 * A user reward module (TypeScript): `score` gives 1 when the completion contains the gold, else 0; `throws` throws
 * on every call; `quarter` always gives {score: 0.25}; `everyOther` throws on every second call; `hangs` never answers; `spins` loops forever synchronously; `wrong` returns a string.
 */
export function writeRewardModule(dir: string): string {
  const file = join(dir, "my-reward.ts");
  writeFileSync(
    file,
    `export const options = { safeParse: (o: any) => (o && typeof o.bonus === "number" && o.bonus < 0
  ? { success: false, error: { message: "bonus must be >= 0" } } : { success: true, data: { bonus: 0, ...o } }) };
export function score(input: { completion: string; gold: unknown }, o: { bonus: number }): number {
  return (input.completion.includes(String(input.gold)) ? 1 : 0) + o.bonus;
}
export function quarter(): { score: number } { return { score: 0.25 }; }
export function throws(): number { throw new Error("my reward crashed"); }
let calls = 0;
export function everyOther(): number { if (calls++ % 2 === 1) throw new Error("odd call"); return 1; }
export function hangs(): Promise<number> { return new Promise(() => {}); }
export function spins(): number { for (;;) {} }
export function wrong(): string { return "yes"; }
export const notAFunction = 3;
`,
  );
  return file;
}

/** The smallest recipe that trains for a few CPU steps (a character model of width 16). */
export function tinyRecipe(outDir: string, task: Record<string, unknown>, steps = 2): Record<string, unknown> {
  return {
    name: "data-run",
    outDir,
    seed: 1,
    model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32 },
    task: { trainExamples: 40, testExamples: 4, ...task },
    algorithm: { nulls: { maxNullFrac: 1 } },
    train: { steps, promptsPerStep: 2, groupSize: 4, maxCompletionTokens: 8 },
    eval: { every: 0, examples: 4, atStart: false },
    checkpoint: { every: 0, keepBest: false },
    log: { progress: false },
  };
}
