/**
 * The readers and the CLI's data commands: verl Parquet with chat-message prompts, a folder of Hugging Face Parquet
 * shards (split from the shard names), field mapping, a model's chat template, per-source rewards (verl's
 * data_source dispatch), `rlvr data inspect`, and `rlvr data export` read back by the reader (round trip).
 */
import { describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { getTask } from "../../src/tasks/index.js";
import { readRows, writeVerlParquet, verlRow } from "../../src/tasks/dataset/index.js";
import { exportTask, inspectDataset } from "../../src/cli/commands/data.js";
import { additionRows, additionVerlRows, tmp, writeAdditionParquet, writeJsonl, writeRewardModule } from "./helpers.js";

/** Writes an HF-style shard of {question, answer} rows. */
function shard(path: string, rows: { question: string; answer: string }[]): void {
  const buf = parquetWriteBuffer({
    columnData: [
      { name: "question", data: rows.map((r) => r.question), type: "STRING" },
      { name: "answer", data: rows.map((r) => r.answer), type: "STRING" },
    ],
  });
  writeFileSync(path, new Uint8Array(buf));
}

describe("dataset formats", () => {
  it("reads a verl Parquet file: chat prompts, ground truth, split from extra_info", () => {
    const path = writeAdditionParquet(join(tmp(), "v.parquet"), 10, 3);
    const task = getTask("dataset", { path });
    const train = task.generate("train", 100, 0);
    const test = task.generate("test", 100, 0);
    expect(train).toHaveLength(10);
    expect(test).toHaveLength(3);
    // A lone user message is its content when the model has no chat template.
    const want = additionVerlRows(10, 3).find(
      (r) => r.extra_info.split === "test" && `dataset/test/${r.extra_info.index}` === test[0]!.id,
    )!;
    expect(test[0]!.prompt).toBe(want.prompt[0]!.content);
    expect(test[0]!.gold.answer).toBe(want.reward_model.ground_truth);
    expect(test[0]!.gold.dataSource).toBe("addition");
  });

  it("the same seed gives the same examples, another seed another order", () => {
    const path = writeJsonl(join(tmp(), "d.jsonl"), additionRows(30));
    const task = getTask("dataset", { path, testPercent: 0 });
    const ids = (seed: number) => task.generate("train", 5, seed).map((e) => e.id);
    expect(ids(1)).toEqual(ids(1));
    expect(ids(1)).not.toEqual(ids(2));
    expect(task.generate("train", 1000, 0)).toHaveLength(30);
  });

  it("reads a folder of Parquet shards; data/train-* and data/test-* give the splits", () => {
    const dir = tmp();
    mkdirSync(join(dir, "data"));
    const rows = additionRows(12);
    shard(join(dir, "data", "train-00000-of-00002.parquet"), rows.slice(0, 5));
    shard(join(dir, "data", "train-00001-of-00002.parquet"), rows.slice(5, 10));
    shard(join(dir, "data", "test-00000-of-00001.parquet"), rows.slice(10));
    expect(readRows(dir)).toHaveLength(12);
    const task = getTask("dataset", { path: dir });
    expect(task.generate("train", 100, 0)).toHaveLength(10);
    expect(
      task
        .generate("test", 100, 0)
        .map((e) => e.prompt)
        .sort(),
    ).toEqual([rows[10]!.question, rows[11]!.question].sort());
  });

  it("maps named fields (dotted paths) and renders with the model's chat template", () => {
    const dir = tmp();
    const path = writeJsonl(join(dir, "d.jsonl"), [{ q: { text: "2+2=" }, meta: { sol: "4" }, part: "train" }]);
    const model = join(dir, "model");
    mkdirSync(model);
    writeFileSync(
      join(model, "tokenizer_config.json"),
      JSON.stringify({
        bos_token: "<s>",
        chat_template:
          "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}",
      }),
    );
    const task = getTask("dataset", {
      path,
      fields: { prompt: "q.text", gold: "meta.sol", split: "part" },
      systemPrompt: "Box the answer.",
      modelPath: model,
    });
    const [e] = task.generate("train", 1, 0);
    // The template's leading BOS is left to the rollout, which adds the tokenizer's BOS id.
    expect(e!.prompt).toBe("<|system|>Box the answer.\n<|user|>2+2=\n<|assistant|>");
    expect(e!.gold.answer).toBe("4");
  });

  it("picks the reward per data_source (verl's dispatch) with several weighted terms", async () => {
    const dir = tmp();
    const module = writeRewardModule(dir);
    const path = writeJsonl(join(dir, "d.jsonl"), [
      { data_source: "maths", prompt: "1+1=", answer: "2", split: "train" },
      { data_source: "mine", prompt: "say 7", answer: "7", split: "train" },
    ]);
    const task = getTask("dataset", {
      path,
      reward: "math-answer",
      rewardBySource: {
        mine: [
          { term: "correct", reward: { module, export: "score" } },
          { term: "format", weight: 0.5, reward: "boxed-format" },
        ],
      },
    });
    expect(task.terms.map((t) => t.name)).toEqual(["correct", "format"]);
    const [maths, mine] = task.generate("train", 2, 0).sort((a, b) => a.id.localeCompare(b.id));
    // Hand-computed: maths row → math-answer only (1); "mine" row → user 1 + 0.5·boxed-format 1 = 1.5.
    expect((await task.score(maths!, "\\boxed{2}")).score).toBe(1);
    const r = await task.score(mine!, "\\boxed{7}");
    expect(r.terms).toEqual({ correct: 1, format: 1 });
    expect(r.score).toBe(1.5);
    expect((await task.score(mine!, "\\boxed{8}")).score).toBe(0.5);
  });
});

describe("rlvr data inspect", () => {
  it("prints rows, fields, five prompts as the model sees them and the gold count", () => {
    const rows = [...additionRows(9), { question: "1+1=", answer: "\\frac{" }];
    const path = writeJsonl(join(tmp(), "d.jsonl"), rows);
    const out = inspectDataset(path);
    expect(out).toMatch(/d\.jsonl: 10 rows \(\d+ train, \d+ test\)/);
    expect(out).toContain("fields: question (string), answer (string)");
    expect(out.match(/^--- dataset\//gm)).toHaveLength(5);
    expect(out).toContain("golds the reward math-answer can parse: 9 of 10");
    expect(out).toMatch(/cannot parse "\\\\frac\{" at .*d\.jsonl:10/);
  });
});

describe("rlvr data inspect with a user reward module", () => {
  it("--reward ./file.ts#export checks the module on the first row; its golds are not parsed at load", () => {
    const dir = tmp();
    const module = writeRewardModule(dir);
    const path = writeJsonl(join(dir, "d.jsonl"), additionRows(6));
    const out = inspectDataset(path, { reward: `${module}#score` });
    expect(out).toMatch(/golds: not checked \(reward module:.*my-reward\.ts#score answers asynchronously\)/);
    expect(() => inspectDataset(path, { reward: `${module}#nope` })).toThrow(/\(export "nope"\): no exported function/);
  });
});

describe("rlvr data export (round trip through the reader)", () => {
  for (const format of ["parquet", "jsonl"] as const) {
    it(`writes addition as verl ${format}; the reader gives back the same prompts and golds`, () => {
      const out = join(tmp(), `addition.${format}`);
      const n = exportTask("addition", { format, out, split: "both", count: 6, seed: 3, options: '{"maxDigits":2}' });
      expect(n).toBe(12);
      const back = getTask("dataset", { path: out });
      const src = getTask("addition", { maxDigits: 2 });
      for (const split of ["train", "test"] as const) {
        const want = src.generate(split, 6, 3).map((e) => [e.prompt, (e.gold as { answer: string }).answer]);
        const got = back.generate(split, 100, 0).map((e) => [e.prompt, e.gold.answer]);
        expect(got.sort()).toEqual(want.sort());
      }
      if (format === "jsonl") {
        const first = JSON.parse(readFileSync(out, "utf8").split("\n")[0]!);
        expect(Object.keys(first)).toEqual(["data_source", "prompt", "ability", "reward_model", "extra_info"]);
      }
    });
  }
  it("a non-answer gold (countdown) is kept as JSON in ground_truth and extra_info.gold", () => {
    const e = getTask("countdown").generate("test", 1, 0)[0]!;
    const row = verlRow("countdown", "test", 0, e);
    expect(JSON.parse(row.reward_model.ground_truth)).toEqual(e.gold);
    const path = join(tmp(), "c.parquet");
    writeVerlParquet(path, [row]);
    expect(readRows(path)[0]!.row).toEqual({ ...row, extra_info: { ...row.extra_info } });
  });
});

describe("example ids", () => {
  it("repeated ids (two verl sets concatenated, each indexed from 0) fall back to row numbers, unique per split", () => {
    const rows = [0, 1, 0, 1].map((index, i) => ({
      data_source: i < 2 ? "a" : "b",
      prompt: `${i}+1=`,
      answer: String(i + 1),
      extra_info: { index, split: "train" },
    }));
    const path = writeJsonl(join(tmp(), "cat.jsonl"), rows);
    const ids = getTask("dataset", { path })
      .generate("train", 10, 0)
      .map((e) => e.id);
    expect(ids.sort()).toEqual([
      "dataset/train/row-0",
      "dataset/train/row-1",
      "dataset/train/row-2",
      "dataset/train/row-3",
    ]);
  });
});

describe("goldPattern", () => {
  it("takes the gold from a longer text (GSM8K's '#### 72'); a row it does not match is a bad gold", () => {
    const path = writeJsonl(join(tmp(), "gsm.jsonl"), [
      { question: "Natalia sold 48 clips, then half as many. How many?", answer: "48/2 = 24\n48+24 = 72\n#### 72" },
      { question: "2+2?", answer: "it is four" },
    ]);
    const task = getTask("dataset", { path, goldPattern: "^#### (.+)$", badGolds: "drop", testPercent: 0 });
    const ex = task.generate("train", 10, 0);
    expect(ex.map((e) => e.gold.answer)).toEqual(["72"]);
    expect(() => getTask("dataset", { path, goldPattern: "^#### (.+)$" })).toThrow(
      /1 of 2 golds cannot be parsed.*\n.*gsm\.jsonl:2/,
    );
    expect(() => getTask("dataset", { path, goldPattern: "([" })).toThrow(/goldPattern: not a regular expression/);
  });
});

describe("load cache", () => {
  it("a second build with the same options reuses the load; a changed file is read again", async () => {
    const { appendFileSync } = await import("node:fs");
    const { loadDataset, datasetOptions } = await import("../../src/tasks/dataset/index.js");
    const path = writeJsonl(join(tmp(), "d.jsonl"), additionRows(20));
    const o = datasetOptions.parse({ path });
    const first = loadDataset(o);
    expect(loadDataset(datasetOptions.parse({ path }))).toBe(first);
    appendFileSync(path, JSON.stringify({ question: "9+9=", answer: "18" }) + "\n");
    expect(loadDataset(o).rows).toHaveLength(21);
  });
});
