/**
 * Completion text as OpenAI clients expect it: the decoded tokens cut before the first stop string (the stop string
 * itself is not returned, as in OpenAI and vLLM; the token ids and log-probs still cover every sampled token, stop
 * tokens included, so RL clients see exactly what was sampled). Streaming emits only text that can no longer turn
 * out to be part of a stop string or of a multi-byte character still being decoded.
 */
import type { Tokenizer } from "../../models/tokenizer.js";

/** The text of `tokens`, cut before the first stop string. */
export function visibleText(tokenizer: Tokenizer, tokens: readonly number[], stops: readonly string[]): string {
  const text = tokenizer.decode(tokens);
  return cutAtStop(text, stops).text;
}

function cutAtStop(text: string, stops: readonly string[]): { text: string; cut: boolean } {
  let at = -1;
  for (const s of stops) {
    const i = text.indexOf(s);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  return at < 0 ? { text, cut: false } : { text: text.slice(0, at), cut: true };
}

/** Incremental text of one streamed choice. */
export class TextStream {
  private emitted = 0;
  private readonly holdBack: number;

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly stops: readonly string[],
  ) {
    this.holdBack = Math.max(0, ...stops.map((s) => s.length - 1));
  }

  /** New text that is safe to send after `tokens` (the tokens so far); `final` sends everything left. */
  next(tokens: readonly number[], final: boolean): string {
    const { text, cut } = cutAtStop(this.tokenizer.decode(tokens), this.stops);
    let end = text.length;
    if (!final && !cut) {
      end = Math.max(0, end - this.holdBack);
      while (end > 0 && text[end - 1] === "\uFFFD") end--; // a character whose bytes have not all arrived
    }
    if (end <= this.emitted) return "";
    const delta = text.slice(this.emitted, end);
    this.emitted = end;
    return delta;
  }
}
