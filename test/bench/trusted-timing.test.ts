/**
 * The pieces that make a speed bench's figures trustworthy (issue 21, docs/benchmarks.md "Speed benches"): the load
 * check (bench/harness/load.ts), interleaved arms with medians, quartiles and per-turn ratios (interleave.ts), and a
 * peer kept running as a child process (peer-process.ts), driven by a stand-in peer script.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  LOAD_ALLOWANCE,
  OTHERS_LIMIT,
  loadSample,
  loadVerdict,
  parsePidStat,
  parseProcStat,
  treeTicks,
  type LoadSample,
} from "../../bench/harness/load.js";
import { interleave, pairedRatio, spread } from "../../bench/harness/interleave.js";
import { PeerProcess } from "../../bench/harness/peer-process.js";

const at = (load1: number): LoadSample => ({ load1, cores: 2, at: "2026-12-03T00:00:00Z" });

describe("loadVerdict", () => {
  it("counts a run whose load stays within its threads plus the allowance, before and after", () => {
    const v = loadVerdict(at(0.1), at(2.4), 2);
    expect(v.counts).toBe(true);
    expect(v.line).toBe("load average 0.10 before, 2.40 after; 2 threads: quiet");
  });

  it("refuses a run when either reading exceeds threads + allowance, and says so", () => {
    expect(loadVerdict(at(2 + LOAD_ALLOWANCE + 0.01), at(1), 2).counts).toBe(false);
    const v = loadVerdict(at(0.2), at(3.2), 2);
    expect(v.counts).toBe(false);
    expect(v.line).toMatch(/^WARNING: load average 0.20 before, 3.20 after; 2 threads: above 2.5, .*does not count$/);
    // One thread: a second busy process alone pushes the load past 1.5.
    expect(loadVerdict(at(0), at(1.9), 1).counts).toBe(false);
  });

  it("reads the machine", () => {
    const s = loadSample();
    expect(s.load1).toBeGreaterThanOrEqual(0);
    expect(s.cores).toBeGreaterThan(0);
    expect(Number.isNaN(Date.parse(s.at))).toBe(false);
    if (process.platform === "linux") {
      const c = s.cpu!;
      expect(c.busy).toBeGreaterThan(0);
      expect(c.busy).toBeLessThanOrEqual(c.total);
      expect(c.own).toBeGreaterThan(0); // this test's process has run
      expect(c.own).toBeLessThanOrEqual(c.busy);
    }
  });
});

describe("loadVerdict from CPU accounting", () => {
  // 2 cores, 10 s of wall time = 2,000 ticks of total CPU time at USER_HZ 100
  const reading = (total: number, busy: number, own: number, load1 = 3): LoadSample => ({
    load1,
    cores: 2,
    at: "2026-12-06T00:00:00Z",
    cpu: { total, busy, own },
  });

  it("counts a run where only this process tree was busy, whatever the load average says", () => {
    // busy +1,900 ticks, all of them ours: others 0 cores, though the load average (3) is above 2.5
    const v = loadVerdict(reading(10_000, 4_000, 500), reading(12_000, 5_900, 2_400), 2);
    expect(v.counts).toBe(true);
    expect(v.othersCores).toBe(0);
    expect(v.line).toBe(
      "load average 3.00 before, 3.00 after; 2 threads; other processes used 0.00 cores on average during the run: quiet",
    );
  });

  it("refuses a run where others used more than the limit, and says how much", () => {
    // busy +1,900, ours +1,300: others 600 ticks over 1,000 ticks of one CPU = 0.6 cores
    const v = loadVerdict(reading(10_000, 4_000, 500, 0.1), reading(12_000, 5_900, 1_800, 0.1), 2);
    expect(v.counts).toBe(false);
    expect(v.othersCores).toBeCloseTo(0.6, 12);
    expect(v.line).toMatch(/^WARNING: .*other processes used 0\.60 cores .*above 0\.2, so this run does not count$/);
    // just at the limit still counts; just above does not
    const edge = (othersTicks: number) =>
      loadVerdict(reading(0, 0, 0), reading(2_000, 1_000, 1_000 - othersTicks), 1).counts;
    expect(edge(OTHERS_LIMIT * 1_000)).toBe(true);
    expect(edge(OTHERS_LIMIT * 1_000 + 1)).toBe(false);
  });

  it("falls back to the load average when a reading has no counters", () => {
    const v = loadVerdict({ load1: 0.2, cores: 2, at: "" }, reading(12_000, 5_900, 1_800, 3.2), 2);
    expect(v.counts).toBe(false);
    expect(v.othersCores).toBeUndefined();
  });

  it("parses /proc/stat, leaving idle and iowait out of busy and steal in", () => {
    const text = "cpu  100 5 50 1000 20 3 2 7 40 0\ncpu0 50 2 25 500 10 1 1 3 20 0\nintr 1\n";
    // total: user..steal = 100+5+50+1000+20+3+2+7 = 1,187 (guest is inside user); busy = 1,187 - 1,000 - 20
    expect(parseProcStat(text)).toEqual({ total: 1_187, busy: 167 });
    expect(() => parseProcStat("intr 1\n")).toThrow(/no aggregate cpu line/);
  });

  it("parses /proc/<pid>/stat with a command name holding spaces and parentheses", () => {
    // fields: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
    const text = "4242 (node (a b)) S 17 4242 4242 0 -1 4194304 100 0 0 0 250 30 12 3 20 0 9";
    expect(parsePidStat(text)).toEqual({ ppid: 17, ticks: 250 + 30 + 12 + 3 });
  });

  it("sums a process tree: the root and every descendant, nothing beside it", () => {
    const stats = new Map([
      [1, { ppid: 0, ticks: 1_000 }],
      [10, { ppid: 1, ticks: 5 }], // root of the bench
      [11, { ppid: 10, ticks: 7 }], // its peer
      [12, { ppid: 11, ticks: 2 }], // the peer's child
      [20, { ppid: 1, ticks: 900 }], // a neighbour
    ]);
    expect(treeTicks(stats, 10)).toBe(14);
    expect(treeTicks(stats, 20)).toBe(900);
    expect(treeTicks(stats, 99)).toBe(0);
  });
});

describe("spread", () => {
  it("gives the median, extremes and interpolated quartiles", () => {
    // Sorted: 1 2 3 4 10 -> q1 at position 1 (2), median at 2 (3), q3 at 3 (4).
    expect(spread([10, 3, 1, 4, 2])).toEqual({ n: 5, median: 3, min: 1, max: 10, q1: 2, q3: 4 });
    // Even count: the median between 2 and 3; q1 at position 0.75 (1.75), q3 at 2.25 (3.25).
    expect(spread([4, 1, 3, 2])).toEqual({ n: 4, median: 2.5, min: 1, max: 4, q1: 1.75, q3: 3.25 });
    expect(spread([7])).toEqual({ n: 1, median: 7, min: 7, max: 7, q1: 7, q3: 7 });
    expect(() => spread([])).toThrow(/no samples/);
  });
});

describe("interleave", () => {
  it("runs the arms in turns A B A B, drops the warm-up turns, and keeps each arm's samples in order", async () => {
    const order: string[] = [];
    let a = 0;
    let b = 100;
    const out = await interleave(
      {
        rlvr: () => (order.push("A"), ++a),
        peer: async () => (order.push("B"), ++b),
      },
      3,
      1,
    );
    expect(order.join("")).toBe("ABABABAB");
    expect(out.rlvr.samples).toEqual([2, 3, 4]); // the first call (1) was the warm-up
    expect(out.peer.samples).toEqual([102, 103, 104]);
    expect(out.rlvr.median).toBe(3);
    await expect(interleave({ a: () => 1 }, 0)).rejects.toThrow(/reps/);
  });

  it("the per-turn ratio sees through a drift that moves both arms", () => {
    // The machine slows by half in the middle: each turn's ratio is still 2.
    const rlvr = [2, 2, 1, 1];
    const peer = [1, 1, 0.5, 0.5];
    expect(pairedRatio(rlvr, peer)).toMatchObject({ median: 2, min: 2, max: 2 });
    expect(() => pairedRatio([1], [1, 2])).toThrow(/1 samples against 2/);
  });
});

describe("PeerProcess", () => {
  const script = join(import.meta.dirname, "fixtures", "echo-peer.mjs");

  it("answers calls by id, passes other lines to onLog, and rejects error answers", async () => {
    const logs: string[] = [];
    const peer = PeerProcess.start(process.execPath, [script], { onLog: (l) => logs.push(l) });
    const [x, y] = await Promise.all([peer.call({ op: "square", x: 3 }), peer.call({ op: "square", x: 5 })]);
    expect([x, y]).toEqual([9, 25]);
    expect(await peer.call<{ tokensPerS: number }>({ op: "chatty" })).toEqual({ tokensPerS: 42 });
    expect(logs).toEqual(["warming up the peer", '{"id":999,"value":"an id nobody asked for"}']);
    await expect(peer.call({ op: "fail" })).rejects.toThrow("peer: no such shape");
    await peer.close();
    await expect(peer.call({ op: "square", x: 1 })).rejects.toThrow(/exited \(code 0\)/);
  });

  it("a peer that dies fails its pending call with the exit code and its stderr, and every later call", async () => {
    const peer = PeerProcess.start(process.execPath, [script]);
    await expect(peer.call({ op: "die" })).rejects.toThrow(/exited \(code 3\): peer crashed on purpose/);
    await expect(peer.call({ op: "square", x: 2 })).rejects.toThrow(/code 3/);
  });

  it("a command that cannot start fails its calls", async () => {
    const peer = PeerProcess.start(join(import.meta.dirname, "no-such-peer"), []);
    await expect(peer.call({ op: "square", x: 2 })).rejects.toThrow(/failed to start|exited/);
  });
});
