/**
 * Stop-string detection for one generated row.
 *
 * After each new token we decode only a tail window of the completion (enough tokens to cover the longest stop
 * string, assuming each token decodes to at least one character, plus a margin for byte-level tokens that decode
 * to partial characters) and look for any stop string in it. A stop string can only newly appear in text that
 * ends with the latest token, so the window suffices and the per-token cost stays constant.
 */
import type { Tokenizer } from "../models/tokenizer.js";

/** Watches one row's completion for stop strings. */
export class StopWatcher {
  private readonly window: number;

  /** `stops` are the stop strings (empty strings are ignored). */
  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly stops: readonly string[],
  ) {
    this.stops = stops.filter((s) => s.length > 0);
    this.window = Math.max(0, ...this.stops.map((s) => s.length)) + 4;
  }

  /** True when the completion so far contains a stop string ending in its last token. */
  hit(completion: readonly number[]): boolean {
    if (this.stops.length === 0 || completion.length === 0) return false;
    const tail = this.tokenizer.decode(completion.slice(Math.max(0, completion.length - this.window)));
    return this.stops.some((s) => tail.includes(s));
  }
}
