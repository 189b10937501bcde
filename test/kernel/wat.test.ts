/**
 * WebAssembly-text kernels (wasm-kernel tasks): the naive module passes every gate; a module that skips C, one
 * with an import (a way to reach the host) and an invalid one all score −1; a ```wat block is read only when the
 * reward's language is "wat".
 */
import { afterAll, describe, expect, it } from "vitest";
import { closeSharedPool } from "../../src/rewards/sandbox/pool.js";
import { extractKernel, naiveKernelCompletion, scoreKernel, type KernelGold } from "../../src/rewards/kernel/reward.js";
import { NAIVE_MATMUL_WAT } from "../../src/rewards/kernel/wat.js";
import { createMatmulKernelTask } from "../../src/tasks/matmul-kernel.js";

afterAll(() => closeSharedPool());

const GOLD: KernelGold = { m: 24, n: 20, k: 16, dtype: "float32", baseline: "naive" };
const WAT = { profile: "test" as const, language: "wat" as const };
const fenced = (src: string) => "```wat\n" + src + "\n```";

describe("wat kernels", () => {
  it("passes the naive module through every gate", async () => {
    const r = await scoreKernel(naiveKernelCompletion("wat"), GOLD, WAT);
    expect(r.terms.correct).toBe(1);
    expect(r.score!).toBeGreaterThanOrEqual(-0.9);
  });

  it("fails a module that never writes C (stale memory is caught)", async () => {
    const skip = NAIVE_MATMUL_WAT.replace(/\(f32\.store [^\n]*\n/, "\n");
    expect(skip).not.toBe(NAIVE_MATMUL_WAT);
    const r = await scoreKernel(fenced(skip), GOLD, WAT);
    expect(r).toMatchObject({ score: -1, terms: { correct: 0 } });
  });

  it("fails a module that imports anything (no host calls, no clock)", async () => {
    const withImport = NAIVE_MATMUL_WAT.replace("(module", '(module (import "env" "now" (func $now (result f64)))');
    const r = await scoreKernel(fenced(withImport), GOLD, WAT);
    expect(r.score).toBe(-1);
    expect(String(r.info?.reason)).toMatch(/load: wat: the module must not import anything/);
  });

  it("fails an invalid module", async () => {
    const r = await scoreKernel(fenced("(module (func (result i32) (f32.const 1)))"), GOLD, WAT);
    expect(r.score).toBe(-1);
    expect(String(r.info?.reason)).toMatch(/load: wat:/);
  });

  it("reads a ```wat block only in wat mode", () => {
    expect(extractKernel(naiveKernelCompletion("wat"), "js")).toBeNull();
    expect(extractKernel(naiveKernelCompletion("wat"), "wat")).toContain("(module");
  });

  it("the wat task's gold completion is correct", async () => {
    const task = createMatmulKernelTask({ profile: "test", language: "wat" });
    const [e] = task.generate("train", 1, 3);
    expect(e!.prompt).toMatch(/WebAssembly text/);
    const r = await task.score({ ...e!, gold: GOLD }, e!.goldCompletion);
    expect(r.terms.correct).toBe(1);
  });
});
