/**
 * Chat messages → prompt token ids.
 *
 * A checkpoint whose folder has a `tokenizer_config.json` with a `chat_template` (a Hugging Face checkpoint) is
 * rendered with that Jinja template through @huggingface/jinja, the same library transformers.js uses, with the
 * variables transformers' `apply_chat_template` passes (`messages`, `add_generation_prompt`, `bos_token`,
 * `eos_token`); the rendered text is encoded without adding special tokens, as `apply_chat_template(tokenize=True)`
 * does, since the template writes them itself. A named-template list (`[{name, template}]`) uses "default".
 *
 * A checkpoint without a template (the built-in char and BPE models) gets a documented plain default: bos (when the
 * tokenizer has one), then one `role: content` line per message, then `assistant:` — text those models can encode.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Template } from "@huggingface/jinja";
import type { Tokenizer } from "../../models/tokenizer.js";
import { badRequest } from "./errors.js";

/** One chat message (text content only). */
export interface ChatMessage {
  role: string;
  content: string;
}

/** Renders chat messages for one checkpoint. */
export interface ChatFormatter {
  /** "tokenizer_config.json" or "default". */
  readonly source: string;
  /** The prompt text (what the model sees, specials written out) and its token ids. */
  render(messages: readonly ChatMessage[]): { text: string; ids: number[] };
}

/** The plain default for checkpoints without a template: `role: content` lines, then the assistant cue. */
export function defaultChatText(messages: readonly ChatMessage[]): string {
  return messages.map((m) => `${m.role}: ${m.content}\n`).join("") + "assistant:";
}

/** The formatter for the checkpoint in `dir` (its tokenizer_config.json template, else the default). */
export function chatFormatter(dir: string, tokenizer: Tokenizer): ChatFormatter {
  const config = readTokenizerConfig(dir);
  const source = templateSource(config?.chat_template);
  if (source === undefined) {
    return {
      source: "default",
      render(messages) {
        const text = defaultChatText(messages);
        const ids = tokenizer.encode(text);
        return { text, ids: tokenizer.bosId !== null ? [tokenizer.bosId, ...ids] : ids };
      },
    };
  }
  let template: Template;
  try {
    template = new Template(source);
  } catch (err) {
    throw new Error(`${join(dir, "tokenizer_config.json")}: chat_template does not parse: ${(err as Error).message}`);
  }
  const special = (v: unknown): string =>
    typeof v === "string"
      ? v
      : typeof (v as { content?: unknown })?.content === "string"
        ? (v as { content: string }).content
        : "";
  const vars = { bos_token: special(config?.bos_token), eos_token: special(config?.eos_token) };
  return {
    source: "tokenizer_config.json",
    render(messages) {
      let text: string;
      try {
        text = template.render({ messages, add_generation_prompt: true, ...vars });
      } catch (err) {
        throw badRequest(`messages: the chat template failed: ${(err as Error).message}`, "messages");
      }
      return { text, ids: tokenizer.encode(text) };
    },
  };
}

function readTokenizerConfig(dir: string): Record<string, unknown> | undefined {
  const path = join(dir, "tokenizer_config.json");
  if (!existsSync(path)) return undefined;
  try {
    const v = JSON.parse(readFileSync(path, "utf8")) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch (err) {
    throw new Error(`${path}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
}

/** A template string, or the "default" entry of a named-template list. */
function templateSource(t: unknown): string | undefined {
  if (typeof t === "string") return t;
  if (Array.isArray(t)) {
    const named = t.find((x) => (x as { name?: unknown })?.name === "default") as { template?: unknown } | undefined;
    return typeof named?.template === "string" ? named.template : undefined;
  }
  return undefined;
}
