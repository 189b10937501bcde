/**
 * The video generator and tasks (src/tasks/vision/video*.ts): bouncing motion (hand-computed), exact on-screen spans
 * and tracks, frames re-rendered from the gold, gold completions earning full reward, and wrong answers earning
 * nothing on the correct term.
 */
import { describe, expect, it } from "vitest";
import { Rng } from "../../src/util/rng.js";
import { getTask } from "../../src/tasks/index.js";
import {
  drawVideo,
  moverAt,
  onScreen,
  positionAt,
  renderVideo,
  track,
  type Mover,
  type Video,
} from "../../src/tasks/vision/video.js";

const mover: Mover = { shape: "square", colour: "red", size: 8, x: 20, y: 0, dx: 3, dy: 0, from: 2, to: 6 };

describe("video generator", () => {
  it("moves in straight lines and bounces off the walls (hand-computed)", () => {
    // span = 32 - 8 = 24: x = 20, 23, then 26 → reflected to 22, then 29 → 19
    expect([0, 1, 2, 3].map((t) => positionAt(mover, 32, t).x)).toEqual([20, 23, 22, 19]);
    expect(moverAt(mover, 32, 1)).toBeNull(); // not yet on screen
    expect(moverAt(mover, 32, 2)!.box).toEqual([22, 0, 30, 8]);
    const v: Video = { size: 32, frames: 8, movers: [mover] };
    expect(onScreen(v, 0)).toEqual([1, 3]); // frames [2, 6) at 0.5 s
    expect(track(v, 0).map((b) => b !== null)).toEqual([false, false, true, true, true, true, false, false]);
  });

  it("is seeded; object 0 is on screen in every frame", () => {
    const o = { size: 32, minFrames: 8, maxFrames: 16, maxObjects: 3, minSize: 6, maxSize: 10 };
    const v = drawVideo(new Rng(4), o);
    expect(drawVideo(new Rng(4), o)).toEqual(v);
    expect(v.frames).toBeGreaterThanOrEqual(8);
    expect(track(v, 0).every((b) => b !== null)).toBe(true);
    expect(renderVideo(v, "x")).toHaveLength(v.frames);
  });

  it("with maxSpan, keeps the other objects 2 to maxSpan frames and spreads their spans over the clip", () => {
    const o = { size: 32, minFrames: 16, maxFrames: 16, maxObjects: 3, minSize: 6, maxSize: 10, maxSpan: 4 };
    const rng = new Rng(9);
    const lengths = new Set<number>();
    const starts = new Set<number>();
    for (let k = 0; k < 300; k++) {
      const v = drawVideo(rng, o);
      expect(v.movers[0]).toMatchObject({ from: 0, to: 16 });
      for (const m of v.movers.slice(1)) {
        expect(m.to - m.from).toBeGreaterThanOrEqual(2);
        expect(m.to - m.from).toBeLessThanOrEqual(4);
        expect(m.from).toBeGreaterThanOrEqual(0);
        expect(m.to).toBeLessThanOrEqual(16);
        lengths.add(m.to - m.from);
        starts.add(m.from);
      }
    }
    expect([...lengths].sort()).toEqual([2, 3, 4]);
    // every start a 2-frame span can have (0..14) turns up: spans reach both ends of the clip
    expect([...starts].sort((a, b) => a - b)).toEqual(Array.from({ length: 15 }, (_, i) => i));
    // a maxSpan past the clip still leaves the object off screen somewhere (at most frames - 1 long)
    const wide = { ...o, minFrames: 4, maxFrames: 4, maxSpan: 10 };
    for (let k = 0; k < 50; k++)
      for (const m of drawVideo(rng, wide).movers.slice(1)) expect(m.to - m.from).toBeLessThan(4);
  });
});

describe.each(["video-temporal", "video-tracking", "video-mcq", "video-grounded-qa"])("%s", (name) => {
  const task = getTask(name, {});
  const test = task.generate("test", 4, 3);

  it("gives every frame with its time, and the frames re-render from the gold", () => {
    for (const e of test) {
      const video = (e.gold as { video: Video }).video;
      expect(e.images).toHaveLength(video.frames);
      expect(e.prompt.split("<image>").length - 1).toBe(video.frames);
      expect(e.prompt).toContain("t=0.5s <image>\n");
      expect(renderVideo(video)[1]!.data).toEqual(e.images![1]!.data);
    }
  });

  it("budgets enough new tokens for its gold answer, with and without <think>, up to 32 frames", () => {
    for (const o of [{}, { requireThink: true }, { minFrames: 32, maxFrames: 32 }, { maxFrames: 16, maxSpan: 3 }]) {
      const t = getTask(name, o);
      // the character tokenizer: one token a character
      const longest = Math.max(...t.generate("train", 60, 2).map((e) => e.goldCompletion.length));
      expect(longest).toBeLessThanOrEqual(t.maxNewTokens!);
    }
  });

  it("gives the gold completion full reward and the correct term 1", async () => {
    const max = { "video-temporal": 2, "video-tracking": 2, "video-mcq": 2, "video-grounded-qa": 3 }[name]!;
    for (const e of test) {
      const r = await task.score(e, e.goldCompletion);
      expect(r.terms.correct, e.goldCompletion).toBe(1);
      expect(r.score).toBeCloseTo(max, 6);
    }
  });

  it("gives wrong or empty answers nothing on the correct term", async () => {
    const e = test[0]!;
    for (const bad of ["", "<answer>A B C D</answer>", "<answer>0 to 100</answer>", "<answer>[[0,0,32,32]]</answer>"]) {
      expect((await task.score(e, bad)).terms.correct, bad).toBe(0);
    }
  });
});

describe("time questions (video-temporal, video-grounded-qa)", () => {
  it("ask only about objects that are not on screen for the whole clip", async () => {
    for (const name of ["video-temporal", "video-grounded-qa"]) {
      const task = getTask(name, {});
      for (const e of task.generate("train", 40, 5)) {
        const g = e.gold as { video: Video; segment?: [number, number]; glue?: [number, number][] };
        const span = g.segment ?? g.glue![0]!;
        expect(span, e.prompt.slice(-60)).not.toEqual([0, g.video.frames * 0.5]);
      }
    }
    // the answer "the whole clip" to a temporal question: its tIoU is the span's share of the clip, below 1
    const task = getTask("video-temporal", {});
    const e = task.generate("test", 1, 9)[0]!;
    const g = e.gold as { video: Video; segment: [number, number] };
    const whole = await task.score(e, `<answer>0 to ${g.video.frames * 0.5}</answer>`);
    expect(whole.terms.correct).toBe((g.segment[1] - g.segment[0]) / (g.video.frames * 0.5) >= 0.5 ? 1 : 0);
    expect(whole.score).toBeCloseTo(1 + (g.segment[1] - g.segment[0]) / (g.video.frames * 0.5), 6);
  });
});

describe("video-mix (VideoChat-R1's joint mix)", () => {
  const task = getTask("video-mix", {});
  const train = task.generate("train", 6, 0);

  it("takes the mixed tasks in turn and scores each example by its own task", async () => {
    expect(train.map((e) => (e.gold as { task: string }).task)).toEqual([
      "video-temporal",
      "video-tracking",
      "video-grounded-qa",
      "video-temporal",
      "video-tracking",
      "video-grounded-qa",
    ]);
    expect(task.terms.map((t) => t.name)).toEqual(["temporal", "tracking", "grounded-qa", "correct"]);
    const r = await task.score(train[2]!, train[2]!.goldCompletion);
    expect(r.terms).toEqual({ temporal: 0, tracking: 0, "grounded-qa": 3, correct: 1 });
    expect(r.score).toBeCloseTo(3, 6);
    const wrong = await task.score(train[0]!, "<answer>0 to 0.1</answer>");
    expect(wrong.terms.correct).toBe(0);
  });

  it("each example stops where its own task's answers end: grounded QA after its <glue>, not at </answer>", () => {
    expect(train.map((e) => e.stop)).toEqual(train.map((e) => getTask((e.gold as { task: string }).task, {}).stop));
    const qa = train[2]!;
    expect(qa.stop).toEqual(["</glue>"]);
    // the gold answer writes </answer> first: a watcher with the mix's union would have ended it there
    expect(qa.goldCompletion.indexOf("</answer>")).toBeLessThan(qa.goldCompletion.indexOf("<glue>"));
    expect(train[0]!.stop).toEqual(["</answer>"]);
  });

  it("rejects an unknown mixed task by name", () => {
    expect(() => getTask("video-mix", { tasks: ["video-dance"] })).toThrow(/tasks/);
  });
});
