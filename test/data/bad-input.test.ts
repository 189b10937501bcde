/** Bad input errors at load and names the row or column; a user reward that throws or hangs costs one completion. */
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { getTask } from "../../src/tasks/index.js";
import { rewards } from "../../src/rewards/registry.js";
import { userRewardStats } from "../../src/rewards/user-module.js";
import { closeSharedPool } from "../../src/rewards/sandbox/index.js";
import { additionRows, tmp, writeAdditionParquet, writeJsonl, writeRewardModule } from "./helpers.js";

const load = (options: Record<string, unknown>) => getTask("dataset", options);

describe("bad data errors at load, naming the row or column", () => {
  it("a malformed JSONL line names the file and line", () => {
    const path = join(tmp(), "bad.jsonl");
    writeFileSync(path, '{"question":"1+1=","answer":"2"}\n{"question":"2+2=", answer:4}\n');
    expect(() => load({ path })).toThrow(/bad\.jsonl:2: not valid JSON/);
  });
  it("a line that is JSON but not an object names the line", () => {
    const path = join(tmp(), "arr.jsonl");
    writeFileSync(path, '{"question":"1+1=","answer":"2"}\n[1,2]\n');
    expect(() => load({ path })).toThrow(/arr\.jsonl:2: expected a JSON object per line/);
  });
  it("a named column that is missing names it and lists the columns there are", () => {
    const path = writeJsonl(join(tmp(), "d.jsonl"), additionRows(5));
    expect(() => load({ path, fields: { gold: "solution" } })).toThrow(
      /missing column "solution" \(fields\.gold\); columns: question, answer/,
    );
  });
  it("no usual prompt column: the error lists what it tried", () => {
    const path = writeJsonl(join(tmp(), "d.jsonl"), [{ text: "1+1=", answer: "2" }]);
    expect(() => load({ path })).toThrow(/no prompt column \(tried prompt, question, problem, input\); columns: text/);
  });
  it("a row without a value in a mapped column names the row", () => {
    const rows: unknown[] = additionRows(3);
    rows.push({ question: "9+9=" });
    const path = writeJsonl(join(tmp(), "d.jsonl"), rows);
    expect(() => load({ path })).toThrow(/d\.jsonl:4: no value in column "answer"/);
  });
  it("a Parquet file of the wrong schema (prompt is a number) names the row and column", () => {
    const path = join(tmp(), "wrong.parquet");
    const buf = parquetWriteBuffer({
      columnData: [
        { name: "prompt", data: [7, 8], type: "INT32" },
        { name: "answer", data: ["1", "2"], type: "STRING" },
      ],
    });
    writeFileSync(path, new Uint8Array(buf));
    expect(() => load({ path })).toThrow(
      /wrong\.parquet#0: column "prompt" must be a string or a list of \{role, content\}/,
    );
  });
  it("a file that is not Parquet at all names the file", () => {
    const path = join(tmp(), "fake.parquet");
    writeFileSync(path, "not parquet");
    expect(() => load({ path })).toThrow(/fake\.parquet: not a readable Parquet file/);
  });
  it("a gold the reward cannot parse is an error at load, listing the row (drop and keep go on)", () => {
    const rows = [...additionRows(4), { question: "1+1=", answer: "\\frac{" }];
    const path = writeJsonl(join(tmp(), "golds.jsonl"), rows);
    expect(() => load({ path })).toThrow(/1 of 5 golds cannot be parsed by reward "math-answer"[\s\S]*golds\.jsonl:5/);
    expect(load({ path, badGolds: "drop" }).description).toMatch(/^5 rows/);
    const kept = load({ path, badGolds: "drop", testPercent: 0 });
    expect(kept.generate("train", 100, 0)).toHaveLength(4);
  });
  it("a correctTerm that is not a term is an error listing the terms", () => {
    const path = writeJsonl(join(tmp(), "d.jsonl"), additionRows(3));
    const reward = [{ term: "right", reward: "math-answer" }];
    expect(() => load({ path, reward })).toThrow(/correctTerm: "correct" is not a term of the reward; terms: right/);
    expect(load({ path, reward, correctTerm: "right" }).correctTerm).toBe("right");
  });
  it("an unknown reward name is an error", () => {
    const path = writeJsonl(join(tmp(), "d.jsonl"), additionRows(3));
    expect(() => load({ path, reward: "no-such-reward" })).toThrow(/reward "no-such-reward" is not registered/);
  });
});

describe("user reward modules are checked at load", () => {
  const setup = () => {
    const dir = tmp();
    return { path: writeAdditionParquet(join(dir, "d.parquet"), 6, 2), module: writeRewardModule(dir) };
  };
  it("a missing export names the file and the export", () => {
    const { path, module } = setup();
    expect(() => load({ path, reward: { module, export: "nope" } })).toThrow(
      /reward module .*my-reward\.ts \(export "nope"\): no exported function "nope"/,
    );
    expect(() => load({ path, reward: { module, export: "notAFunction" } })).toThrow(/export "notAFunction"/);
  });
  it("a function that returns something else on the first row is refused", () => {
    const { path, module } = setup();
    expect(() => load({ path, reward: { module, export: "wrong" } })).toThrow(
      /\(export "wrong"\): returned "yes" on the first row; expected a number, \{score\} or null/,
    );
  });
  it("options are checked with the module's options schema", () => {
    const { path, module } = setup();
    expect(() => load({ path, reward: { module, export: "score", options: { bonus: -1 } } })).toThrow(
      /invalid options: bonus must be >= 0/,
    );
  });
  it("a module file that does not exist is named", () => {
    const { path } = setup();
    expect(() => load({ path, reward: { module: "/nowhere/r.ts", export: "score" } })).toThrow(
      /reward module \/nowhere\/r\.ts: file not found/,
    );
  });
});

describe("a user reward that throws or hangs costs only that completion, and is counted", () => {
  const example = { id: "x", prompt: "1+1=", gold: { answer: "2" }, goldCompletion: "2" };
  it("throws → null with the error, counted", async () => {
    const { registerUserReward } = await import("../../src/rewards/user-module.js");
    const module = writeRewardModule(tmp());
    const name = registerUserReward({ file: module, exportName: "throws" });
    const r = await rewards.score(name, { completion: "2", gold: example.gold });
    expect(r.score).toBeNull();
    expect(String(r.info?.error)).toMatch(/my reward crashed/);
    expect(userRewardStats(name)).toMatchObject({ calls: 1, errors: 1 });
  });
  it("an async hang → null after its timeout, counted as a timeout", async () => {
    const { registerUserReward } = await import("../../src/rewards/user-module.js");
    const module = writeRewardModule(tmp());
    const name = registerUserReward({ file: module, exportName: "hangs", timeoutMs: 200 });
    const t0 = Date.now();
    const r = await rewards.score(name, { completion: "2", gold: example.gold });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r.score).toBeNull();
    expect(String(r.info?.error)).toMatch(/no answer within 200 ms/);
    expect(userRewardStats(name).timeouts).toBe(1);
  });
  it("a synchronous infinite loop in the sandbox pool is killed at its deadline → null", async () => {
    const { registerUserReward } = await import("../../src/rewards/user-module.js");
    const module = writeRewardModule(tmp());
    const name = registerUserReward({ file: module, exportName: "spins", sandbox: true, timeoutMs: 500 });
    const ok = registerUserReward({ file: module, exportName: "score", sandbox: true, timeoutMs: 20_000 });
    try {
      const r = await rewards.score(name, { completion: "2", gold: example.gold });
      expect(r.score).toBeNull();
      expect(String(r.info?.error)).toMatch(/no answer within 500 ms/);
      expect(userRewardStats(name).timeouts).toBe(1);
      // The pool's next call still works, and its options default through the module's schema.
      const good = await rewards.score(ok, { completion: "\\boxed{2}", gold: { answer: "2" } });
      expect(good.score).toBe(1);
    } finally {
      await closeSharedPool();
    }
  }, 60_000);
});
