/**
 * tasks layer entry: the task contract, the registry (`registerTask`, `getTask`, `listTasks`), the scoring helper,
 * and the built-in tasks, which register themselves when this module is imported.
 */
import { registerTask, tasks } from "./registry.js";
import { additionTask } from "./addition.js";
import { arithmeticTask } from "./arithmetic.js";
import { countdownTask } from "./countdown.js";
import { linearEquationTask } from "./linear-equation.js";
import { mpcCarTask } from "./mpc-car.js";
import { optimisationTask } from "./optimisation.js";
import { matmulKernelTask } from "./matmul-kernel.js";
import { sudokuTask } from "./sudoku.js";
import { sakeTask } from "./sake.js";
import { simaTask } from "./sima.js";
import { datasetTask } from "./dataset/index.js";
import { VISION_TASKS } from "./vision/tasks.js";
import { VIDEO_TASKS } from "./vision/video-tasks.js";
import { videoMixTask } from "./vision/video-mix.js";

export * from "./types.js";
export * from "./registry.js";
export * from "./score.js";
export { defineTask, type DefinedTask, type TaskParts, type TaskSpec } from "./define-task.js";
export { splitOf, generateExamples, TEST_PERCENT } from "./generate.js";
export { createAdditionTask, additionOptions, type AdditionOptions, type AnswerGold } from "./addition.js";
export { createArithmeticTask, arithmeticOptions, type ArithmeticOptions } from "./arithmetic.js";
export { createCountdownTask, countdownTaskOptions, type CountdownTaskOptions } from "./countdown.js";
export { createLinearEquationTask, linearEquationOptions, type LinearEquationOptions } from "./linear-equation.js";
export { createOptimisationTask, optimisationOptions, type OptimisationOptions } from "./optimisation.js";
export { createMatmulKernelTask, matmulKernelOptions, type MatmulKernelOptions } from "./matmul-kernel.js";
export { createMpcCarTask, mpcCarOptions, goldParams, type MpcCarOptions } from "./mpc-car.js";
export { createSakeTask, sakeOptions, sakeTestSize, type SakeOptions } from "./sake.js";
export { createSimaTask, simaOptions, simaGoldSegments, type SimaOptions, type SimaGold } from "./sima.js";
export { createSudokuTask, sudokuTaskOptions, countSolutions, makePuzzle, randomGrid } from "./sudoku.js";
export { FORMAT_WEIGHT, ANSWER_STOP, ANSWER_MAX_TOKENS, boxedCompletion } from "./answer-format.js";

/** The built-in task definitions, in registration order. */
export const BUILTIN_TASKS = [additionTask, arithmeticTask, countdownTask, linearEquationTask];

for (const def of BUILTIN_TASKS) if (!tasks.has(def.name)) registerTask(def);

// Tasks whose rewards run code (sandbox, solver, kernel timing): registered here, outside BUILTIN_TASKS (whose
// shared tests assume short character-level maths prompts).
if (!tasks.has(optimisationTask.name)) registerTask(optimisationTask);
if (!tasks.has(matmulKernelTask.name)) registerTask(matmulKernelTask);

// The MPC car task runs a simulator in its reward; registered outside BUILTIN_TASKS (short maths prompts).
if (!tasks.has(mpcCarTask.name)) registerTask(mpcCarTask);

// 4×4 sudoku (wd1/d1's puzzle task): registered outside BUILTIN_TASKS (its answer is a grid, not a boxed number).
if (!tasks.has(sudokuTask.name)) registerTask(sudokuTask);

// SAKE runs multi-turn episodes with the "kg-tools" environment; registered outside BUILTIN_TASKS (short maths prompts).
if (!tasks.has(sakeTask.name)) registerTask(sakeTask);
if (!tasks.has(simaTask.name)) registerTask(simaTask);

// Your own data ("dataset": JSONL, verl Parquet, Parquet shards; docs/data.md); registered outside BUILTIN_TASKS.
if (!tasks.has(datasetTask.name)) registerTask(datasetTask);

// Image and video tasks over generated scenes (docs/vision.md); outside BUILTIN_TASKS (their prompts carry images).
for (const def of [...VISION_TASKS, ...VIDEO_TASKS, videoMixTask]) if (!tasks.has(def.name)) registerTask(def);
