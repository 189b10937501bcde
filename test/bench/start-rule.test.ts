import { describe, expect, it } from "vitest";
import { firstReaching, type Refine } from "../../bench/harness/start-rule.js";

/** A fake SFT curve: the figure of each length (a jump between 800 and 900, a dip after). */
const CURVE: Record<number, number> = { 700: 0.005, 800: 0.17, 900: 0.405, 1000: 0.68, 1200: 0.64 };

async function choose(ladder: number[], threshold: number, refine?: Refine, curve = CURVE) {
  const made: number[] = [];
  const measured: number[] = [];
  const c = await firstReaching(
    ladder,
    threshold,
    async (steps) => (made.push(steps), `start-${steps}`),
    async (start) => {
      const steps = Number(start.slice(6));
      measured.push(steps);
      return curve[steps]!;
    },
    refine,
  );
  return { ...c, made, measured };
}

describe("firstReaching (a bench's start rule)", () => {
  it("takes the first length whose figure reaches the threshold, and builds nothing after it", async () => {
    const c = await choose([700, 800, 900, 1000, 1200], 0.4);
    expect(c.steps).toBe(900);
    expect(c.start).toBe("start-900");
    expect(c.tried).toEqual({ 700: 0.005, 800: 0.17, 900: 0.405 });
    expect(c.made).toEqual([700, 800, 900]);
  });

  it("counts a figure equal to the threshold as reaching it", async () => {
    expect((await choose([700, 800, 900], 0.17)).steps).toBe(800);
  });

  it("falls back to the last length when none reaches the threshold", async () => {
    const c = await choose([700, 800], 0.5);
    expect(c.steps).toBe(800);
    expect(c.tried).toEqual({ 700: 0.005, 800: 0.17 });
  });

  it("with threshold 0 takes the first length without measuring it (a fixed length)", async () => {
    const c = await choose([1000, 1200], 0);
    expect(c).toMatchObject({ steps: 1000, start: "start-1000", tried: {}, measured: [] });
  });

  it("with a ceiling, takes a rung inside [threshold, ceiling] at once", async () => {
    const c = await choose([700, 800, 900, 1000], 0.4, { ceiling: 0.5, minGap: 25 });
    expect(c).toMatchObject({ steps: 900, made: [700, 800, 900] });
  });

  it("with a ceiling, bisects a rung that jumps past it and stops inside the band", async () => {
    // seed 1's curve: 2% at 800, 54.5% at 900; 850 is below the threshold, 875 inside the band.
    const curve = { 700: 0, 800: 0.02, 850: 0.3, 875: 0.45, 900: 0.545 };
    const c = await choose([700, 800, 900, 1000], 0.4, { ceiling: 0.5, minGap: 25 }, curve);
    expect(c.steps).toBe(875);
    expect(c.start).toBe("start-875");
    expect(c.made).toEqual([700, 800, 900, 850, 875]);
    expect(Object.keys(c.tried).map(Number)).toEqual([700, 800, 850, 875, 900]);
  });

  it("with a ceiling, takes the shortest length reaching the threshold when none lands in the band", async () => {
    // 850 overshoots too, 825 is below: the gap is down to 25 steps, so 850 is the start.
    const curve = { 800: 0.02, 825: 0.1, 850: 0.6, 900: 0.7 };
    const c = await choose([800, 900], 0.4, { ceiling: 0.5, minGap: 25 }, curve);
    expect(c.steps).toBe(850);
    expect(c.made).toEqual([800, 900, 850, 825]);
  });

  it("with a ceiling, keeps an overshooting first rung (nothing below it to bisect) and a gap at minGap", async () => {
    expect((await choose([1000, 1200], 0.4, { ceiling: 0.5, minGap: 25 })).steps).toBe(1000);
    const c = await choose([800, 900], 0.4, { ceiling: 0.5, minGap: 100 }, { 800: 0.02, 900: 0.7 });
    expect(c).toMatchObject({ steps: 900, made: [800, 900] });
  });

  it("refuses a ceiling below the threshold", async () => {
    await expect(choose([700], 0.4, { ceiling: 0.3, minGap: 25 })).rejects.toThrow(/ceiling/);
  });

  it("refuses an empty ladder", async () => {
    await expect(choose([], 0.4)).rejects.toThrow(/empty/);
  });
});
