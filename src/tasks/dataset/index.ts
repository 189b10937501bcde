/** The "dataset" task (your own data and reward, docs/data.md): options, readers, field mapping, prompts, export. */
export { datasetTask, createDatasetTask, loadDataset, type LoadedDataset } from "./dataset-task.js";
export { datasetOptions, type DatasetOptions } from "./options.js";
export { readRows, readJsonl, readShardFolder, splitOfShard } from "./read.js";
export { mapRows, type DatasetRow, type ChatMessage } from "./rows.js";
export { promptRenderer, chatTemplateOf } from "./prompt.js";
export { termsOf, goldFor, goldParses, resolveModulePaths, type DatasetGold } from "./terms.js";
export { verlRow, writeVerlParquet, writeVerlJsonl, type VerlRow } from "./export.js";
export { resolveDatasetRecipe } from "./recipe.js";
