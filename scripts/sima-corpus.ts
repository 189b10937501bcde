/**
 * The text that SIMA's BPE tokenizer is trained on (scripts/make-sima-tokenizer.py): bench:sima's SFT mix, the world's
 * solver trajectories of the four SFT kinds and the arithmetic golds, one JSON string per line: each prompt, and each
 * segment of its gold (model turns and observations) or its whole completion.
 * The tokenizer sees only what SFT sees; it learns no task, only which character runs are frequent.
 * Run: npx tsx scripts/sima-corpus.ts > corpus.jsonl
 */
import { sftMix } from "../bench/sima/job.js";
import { sizes } from "../bench/sima/settings.js";

// SFT and RL encode the prompt and each segment (model turn, observation) on its own, so the corpus does too: a
// command then starts a text ("take red key"), as it does when the policy writes it after the "> " observation.
for (const e of sftMix(0, sizes(false).mix))
  for (const text of [e.prompt, ...(e.segments ? e.segments.map((s) => s.text) : [e.completion])])
    process.stdout.write(`${JSON.stringify(text)}\n`);
