/**
 * The served model: a checkpoint (an autoregressive decoder, text-only or vision-language; not a masked-diffusion
 * LM) loaded with its tokenizer and chat formatter, swappable for new weights while the
 * server runs (`POST /v1/load_weights`). A swap replaces the reference only; a batch already decoding keeps the
 * model it started with, so a request is never decoded by two sets of weights.
 */
import { basename, resolve } from "node:path";
import { loadModel } from "../../models/checkpoint.js";
import { isDiffusionLM } from "../../models/diffusion-lm.js";
import type { Tokenizer } from "../../models/tokenizer.js";
import type { Transformer } from "../../models/transformer.js";
import { badRequest, unknownModel } from "./errors.js";
import { chatFormatter, type ChatFormatter } from "./chat-template.js";

/** What one loaded checkpoint provides. */
export interface LoadedWeights {
  model: Transformer;
  tokenizer: Tokenizer;
  chat: ChatFormatter;
  /** Absolute checkpoint folder. */
  path: string;
}

/** Loads a checkpoint folder for serving. */
export function loadForServing(dir: string): LoadedWeights {
  const path = resolve(dir);
  const { model, tokenizer } = loadModel(path);
  if (isDiffusionLM(model)) {
    throw new Error(`${path}: a masked-diffusion LM; the model server serves autoregressive decoders`);
  }
  return { model, tokenizer, chat: chatFormatter(path, tokenizer), path };
}

/** The model behind the server, and how many times its weights were replaced. */
export class ModelHost {
  /** The id clients name in requests. */
  readonly name: string;
  /** Unix seconds the server started (the `created` of /v1/models). */
  readonly created = Math.floor(Date.now() / 1000);
  /** 0 for the weights loaded at start, +1 per successful load_weights. */
  version = 0;
  current: LoadedWeights;

  constructor(dir: string, name?: string) {
    this.current = loadForServing(dir);
    this.name = name ?? basename(this.current.path);
  }

  /** A 404 model_not_found unless `model` is the served name. */
  checkModel(model: string): void {
    if (model !== this.name) throw unknownModel(model, this.name);
  }

  /** Longest prompt + completion, in tokens. */
  get contextLength(): number {
    return this.current.model.config.maxSeqLen;
  }

  /**
   * Loads the checkpoint in `dir` and swaps it in; it must have the same architecture and tokenizer as the served
   * one (this route updates weights, like vLLM's weight-update routes; it does not switch models).
   */
  reload(dir: string): LoadedWeights {
    let next: LoadedWeights;
    try {
      next = loadForServing(dir);
    } catch (err) {
      throw badRequest(`path: ${(err as Error).message}`, "path", "bad_checkpoint");
    }
    const was = this.current;
    if (JSON.stringify(next.model.config) !== JSON.stringify(was.model.config)) {
      throw badRequest(
        `path: ${next.path} has a different model config than the served ${was.path}; load_weights updates weights, ` +
          "start a new server for another model",
        "path",
        "config_mismatch",
      );
    }
    if (JSON.stringify(next.tokenizer.toJSON()) !== JSON.stringify(was.tokenizer.toJSON())) {
      throw badRequest(
        `path: ${next.path} has a different tokenizer than the served ${was.path}`,
        "path",
        "tokenizer_mismatch",
      );
    }
    this.current = next;
    this.version++;
    return next;
  }
}
