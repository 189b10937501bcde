/**
 * Rendering a row's prompt as the model will see it. With a chat template (the `chat_template` of the model
 * folder's tokenizer_config.json, rendered by @huggingface/jinja with `add_generation_prompt: true`, as
 * `transformers`' apply_chat_template does) messages become the template's text. Without one (the built-in
 * character models), a string prompt is used as it is and messages are joined: a lone user message is its content,
 * several are `role: content` lines. A BOS token the template writes first is left out, because the rollout adds
 * the tokenizer's BOS id itself.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Template } from "@huggingface/jinja";
import { ConfigError } from "../../util/errors.js";
import type { ChatMessage } from "./rows.js";

/** Renders prompts; `template` is null when the model has no chat template. */
export interface PromptRenderer {
  template: string | null;
  render(prompt: string | ChatMessage[]): string;
}

/** A special token from tokenizer_config.json: a string or `{ content }`. */
function tokenText(v: unknown): string {
  if (typeof v === "string") return v;
  if (v && typeof v === "object" && typeof (v as { content?: unknown }).content === "string")
    return (v as { content: string }).content;
  return "";
}

/** The chat template of a model folder (tokenizer_config.json), or null. */
export function chatTemplateOf(modelPath: string): { template: string; bos: string; eos: string } | null {
  const file = join(modelPath, "tokenizer_config.json");
  if (!existsSync(file)) return null;
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`${file}: not valid JSON (${(err as Error).message})`);
  }
  let t = config.chat_template;
  // Some models list named templates; "default" is the one apply_chat_template uses.
  if (Array.isArray(t)) t = (t.find((x) => x?.name === "default") ?? t[0])?.template;
  if (typeof t !== "string") return null;
  return { template: t, bos: tokenText(config.bos_token), eos: tokenText(config.eos_token) };
}

/** The renderer for a model folder (or none) and an optional system prompt for string prompts. */
export function promptRenderer(opts: { modelPath?: string; chatTemplate: "auto" | "none"; systemPrompt?: string }) {
  const found = opts.chatTemplate === "auto" && opts.modelPath ? chatTemplateOf(opts.modelPath) : null;
  const compiled = found ? new Template(found.template) : null;
  const messagesOf = (p: string | ChatMessage[]): ChatMessage[] =>
    typeof p === "string"
      ? [...(opts.systemPrompt ? [{ role: "system", content: opts.systemPrompt }] : []), { role: "user", content: p }]
      : p;
  const renderer: PromptRenderer = {
    template: found?.template ?? null,
    render(prompt) {
      const messages = messagesOf(prompt);
      if (compiled) {
        const text = compiled.render({
          messages,
          add_generation_prompt: true,
          bos_token: found!.bos,
          eos_token: found!.eos,
        });
        // The rollout puts the tokenizer's BOS id first itself (rollout/groups.ts), so a leading BOS text would double it.
        return found!.bos && text.startsWith(found!.bos) ? text.slice(found!.bos.length) : text;
      }
      if (messages.length === 1 && messages[0]!.role === "user") return messages[0]!.content;
      if (typeof prompt === "string") return `${opts.systemPrompt}\n\n${prompt}`;
      return messages.map((m) => `${m.role}: ${m.content}`).join("\n");
    },
  };
  return renderer;
}
