/**
 * bench:vision's video figures (bench/vision-video.ts) on answers whose values are known: gold answers score an mIoU
 * and a tracking overlap of 1, unparsable ones 0, and a span that covers half of its gold segment by hand.
 */
import { describe, expect, it } from "vitest";
import {
  VIDEO,
  answerTokens,
  bestConstantSpan,
  groundingMiou,
  seqLen,
  trackingOverlap,
} from "../../bench/vision-video.js";
import { getTask } from "../../src/tasks/index.js";
import type { Example } from "../../src/tasks/types.js";
import type { VideoGold } from "../../src/tasks/vision/video-tasks.js";

const held = (task: string) => getTask(task, VIDEO).generate("test", 6, 0) as Example<VideoGold>[];
const texts = (es: Example<VideoGold>[], f: (e: Example<VideoGold>) => string) => new Map(es.map((e) => [e.id, f(e)]));

describe("bench:vision video figures", () => {
  it("temporal-grounding mIoU: 1 for gold answers, 0 for unparsable or missing ones, by hand for a half span", async () => {
    const es = held("video-temporal");
    expect(
      await groundingMiou(
        es,
        texts(es, (e) => e.goldCompletion),
      ),
    ).toBeCloseTo(1, 12);
    expect(
      await groundingMiou(
        es,
        texts(es, () => "<answer>soon</answer>"),
      ),
    ).toBe(0);
    expect(await groundingMiou(es, new Map())).toBe(0);
    // the first half of each gold segment: IoU = (len/2) / len = 0.5
    const half = texts(es, (e) => {
      const [a, b] = e.gold.segment!;
      return `<answer>${a} to ${(a + b) / 2}</answer>`;
    });
    expect(await groundingMiou(es, half)).toBeCloseTo(0.5, 12);
  });

  it("the blind baseline: the one span that scores best as every answer, by hand on three segments", async () => {
    const es = held("video-temporal").slice(0, 3);
    const segs: [number, number][] = [
      [1, 3],
      [1, 3],
      [2, 4],
    ];
    es.forEach((e, i) => (e.gold = { ...e.gold, segment: segs[i]!, duration: 4 }));
    // "1 to 3": IoU 1, 1, 1/3 (mean 7/9); "1 to 4": 2/3, 2/3, 2/3; "1.5 to 3": 0.75, 0.75, 1/5; none beats 7/9
    const best = await bestConstantSpan(es);
    expect(best.span).toEqual([1, 3]);
    expect(best.miou).toBeCloseTo(7 / 9, 12);
  });

  it("tracking overlap: 1 for gold answers, 0 for unparsable ones", async () => {
    const es = held("video-tracking");
    expect(
      await trackingOverlap(
        es,
        texts(es, (e) => e.goldCompletion),
      ),
    ).toBeCloseTo(1, 12);
    expect(
      await trackingOverlap(
        es,
        texts(es, () => "<answer>[[1,2</answer>"),
      ),
    ).toBe(0);
  });

  it.each([8, 16])("the token budgets at %i frames hold every prompt with its gold answer", (frames) => {
    // the character tokenizer: one token a character, and 9 image tokens a 24 px frame (patch 4, merge 2)
    const tokens = (text: string) => text.replaceAll("<image>", "x".repeat(9)).length;
    const o = { ...VIDEO, minFrames: frames, maxFrames: frames, maxSpan: 4 };
    let longest = 0;
    for (const name of ["video-temporal", "video-tracking", "video-mcq", "video-grounded-qa"]) {
      const task = getTask(name, o);
      for (const e of task.generate("train", 200, 1)) {
        expect(tokens(e.prompt) + tokens(e.goldCompletion)).toBeLessThanOrEqual(seqLen(frames));
        expect(tokens(e.goldCompletion)).toBeLessThanOrEqual(Math.min(answerTokens(frames), task.maxNewTokens ?? 0));
        longest = Math.max(longest, tokens(e.goldCompletion));
      }
    }
    // the tracking answers need most of the budget (one box a frame), so a budget of a fixed size would not do
    expect(longest).toBeGreaterThan(answerTokens(frames) - 40);
  });
});
