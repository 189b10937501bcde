import { describe, expect, it } from "vitest";
import { firstReaching } from "../../bench/harness/start-rule.js";

/** A fake SFT curve: the figure of each length (a jump between 800 and 900, a dip after). */
const CURVE: Record<number, number> = { 700: 0.005, 800: 0.17, 900: 0.405, 1000: 0.68, 1200: 0.64 };

async function choose(ladder: number[], threshold: number) {
  const made: number[] = [];
  const measured: number[] = [];
  const c = await firstReaching(
    ladder,
    threshold,
    async (steps) => (made.push(steps), `start-${steps}`),
    async (start) => {
      const steps = Number(start.slice(6));
      measured.push(steps);
      return CURVE[steps]!;
    },
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

  it("refuses an empty ladder", async () => {
    await expect(choose([], 0.4)).rejects.toThrow(/empty/);
  });
});
