/**
 * `rlvr export <run or checkpoint> --format gguf|safetensors-hf --out PATH [--type f32|f16|q8_0] [--adapter DIR]`:
 * writes a saved model as a GGUF file for llama.cpp-based tools, or as a folder Python `transformers` opens
 * (docs/export.md). With `--adapter`, the LoRA adapter folder is put on the model (its base) and merged on export.
 */
import { existsSync, statSync } from "node:fs";
import type { Command } from "commander";
import { ConfigError } from "../../util/index.js";
import { loadModel, loadModelWithAdapter } from "../../models/checkpoint.js";
import { exportGguf, exportHf, ggufArchitecture, GGUF_TYPES, type GgufExportType } from "../../models/export/index.js";
import { withErrors } from "../errors.js";
import { resolveModelDir } from "./eval.js";

const FORMATS = ["gguf", "safetensors-hf"] as const;

/** Registers `export`. */
export function register(program: Command): void {
  program
    .command("export")
    .description("export a checkpoint as GGUF (llama.cpp) or as a Hugging Face transformers folder")
    .argument("<path>", "run folder (its best, else newest checkpoint) or checkpoint/model folder")
    .requiredOption("--format <format>", `output format: ${FORMATS.join(" | ")}`)
    .requiredOption("--out <path>", "output file (gguf) or folder (safetensors-hf)")
    .option("--type <type>", `tensor type of the GGUF matrices: ${GGUF_TYPES.join(" | ")}`, "f32")
    .option("--checkpoint <name>", "checkpoint of a run folder (default: best, else the newest)")
    .option("--name <name>", "model name written into the GGUF metadata (general.name)")
    .option("--adapter <dir>", "LoRA adapter folder (PEFT layout) trained on this model; merged into the export")
    .action(
      withErrors(
        (
          path: string,
          o: { format: string; out: string; type: string; checkpoint?: string; name?: string; adapter?: string },
        ) => {
          if (!(FORMATS as readonly string[]).includes(o.format))
            throw new ConfigError(`--format must be one of ${FORMATS.join(", ")}, got "${o.format}"`);
          if (!(GGUF_TYPES as readonly string[]).includes(o.type))
            throw new ConfigError(`--type must be one of ${GGUF_TYPES.join(", ")}, got "${o.type}"`);
          if (o.format === "safetensors-hf" && o.type !== "f32")
            throw new ConfigError("--type applies to --format gguf only (safetensors-hf is written as float32)");
          const { dir } = resolveModelDir(path, o.checkpoint);
          const { model, tokenizer } = o.adapter ? loadModelWithAdapter(dir, o.adapter) : loadModel(dir);
          if (o.format === "gguf") {
            if (existsSync(o.out) && statSync(o.out).isDirectory())
              throw new ConfigError(`--out ${o.out} is a folder; give the path of the .gguf file to write`);
            exportGguf(o.out, model, tokenizer, { type: o.type as GgufExportType, name: o.name ?? "rlvr-model" });
            const c = model.config;
            console.log(
              `wrote ${o.out}: ${ggufArchitecture(c)} GGUF, ${o.type}, ${c.nLayers} layers, d ${c.dModel}, ` +
                `vocab ${c.vocabSize}, context ${c.maxSeqLen} (from ${dir}${o.adapter ? ` + ${o.adapter}` : ""})`,
            );
          } else {
            if (existsSync(o.out) && !statSync(o.out).isDirectory())
              throw new ConfigError(`--out ${o.out} is a file; safetensors-hf writes a folder`);
            exportHf(o.out, model, tokenizer);
            console.log(
              `wrote ${o.out}/ (config.json, model.safetensors, tokenizer.json) from ${dir}` +
                (o.adapter ? ` + ${o.adapter} (merged)` : ""),
            );
          }
        },
      ),
    );
}
