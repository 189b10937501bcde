/**
 * Building the policy (and, when β > 0, the frozen reference) from the recipe's `model` section, and the
 * optimizer and learning-rate schedule from `train`.
 */
import { ConfigError, Rng } from "../util/index.js";
import { adamw, sgd, Optimizer, constantLr, linearWarmup, cosineLr, type Tensor } from "../engine/index.js";
import { Transformer } from "../models/transformer.js";
import { parseTransformerConfig } from "../models/config.js";
import { CharTokenizer, type Tokenizer } from "../models/tokenizer.js";
import { loadModel } from "../models/checkpoint.js";
import { loadHfTokenizer } from "../models/hf-tokenizer.js";
import { DiffusionLM, type ModelKind } from "../models/diffusion-lm.js";
import { VisionLanguageModel } from "../models/vision-lm.js";
import { parseVisionConfig } from "../models/vision-config.js";
import type { TrainConfig } from "./config.js";

/** A model and its tokenizer. */
export interface ModelAndTokenizer {
  model: Transformer;
  tokenizer: Tokenizer;
}

/**
 * The start policy: loaded from a checkpoint (whose config.json says its kind), or initialised from the run seed, as a
 * masked-diffusion LM (one more vocabulary id, the mask token) when `kind` is "diffusion". A new model takes the char
 * tokenizer or a tokenizer.json (`model.tokenizer.file`), which is saved with its checkpoints.
 */
export function buildModel(
  cfg: TrainConfig["model"],
  seed: number,
  kind: ModelKind = "autoregressive",
): ModelAndTokenizer {
  if (cfg.type === "checkpoint") return loadModel(cfg.path);
  const tokenizer: Tokenizer = cfg.tokenizer === "char" ? new CharTokenizer() : loadHfTokenizer(cfg.tokenizer.file);
  const config = parseTransformerConfig({
    arch: cfg.arch,
    vocabSize: tokenizer.vocabSize + (kind === "diffusion" ? 1 : 0) + (cfg.vision ? 3 : 0), // + mask / vision ids
    dModel: cfg.dModel,
    nLayers: cfg.nLayers,
    nHeads: cfg.nHeads,
    nKvHeads: cfg.nKvHeads ?? cfg.nHeads,
    dFf: cfg.dFf ?? 4 * cfg.dModel,
    maxSeqLen: cfg.maxSeqLen,
  });
  const rng = new Rng(seed).split("init");
  if (cfg.vision) {
    if (kind === "diffusion") throw new ConfigError("model.vision: a vision encoder needs an autoregressive policy");
    const model = new VisionLanguageModel(config, parseVisionConfig(cfg.vision, "model.vision"), rng);
    return { model, tokenizer: model.tokenizerFor(tokenizer) };
  }
  return { model: kind === "diffusion" ? new DiffusionLM(config, rng) : new Transformer(config, rng), tokenizer };
}

/** The parameters the optimizer updates (those that require grad). */
export function trainableParams(model: Transformer): [string, Tensor][] {
  return model.namedParameters().filter(([, p]) => p.requiresGrad);
}

/** The optimizer named by `train.optimizer`, over the model's trainable parameters. */
export function buildOptimizer(train: TrainConfig["train"], model: Transformer): Optimizer {
  const o = train.optimizer;
  const rule =
    o.type === "adamw"
      ? adamw({ lr: train.lr, betas: o.betas, eps: o.eps, weightDecay: o.weightDecay })
      : sgd({ lr: train.lr, momentum: o.momentum });
  return new Optimizer(rule, trainableParams(model));
}

/** Learning rate at RL step `step` (1-based; the engine's schedules count from 0). */
export function lrAt(train: TrainConfig["train"], step: number): number {
  const s = train.schedule;
  if (s.type === "constant") return constantLr(train.lr)(step - 1);
  if (s.type === "linearWarmup") return linearWarmup(train.lr, s.warmupSteps)(step - 1);
  return cosineLr({ lr: train.lr, warmupSteps: s.warmupSteps, totalSteps: train.steps, minLr: train.lr * s.minLrFrac })(
    step - 1,
  );
}
