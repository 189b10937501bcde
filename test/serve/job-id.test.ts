/**
 * Queue job ids (src/serve/queue-settings.ts): a function of the request id, the request's content hash, and the
 * job's first item and count, so a retried request finds its jobs, and the same id with other content does not.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { contentHashOf, jobIdOf } from "../../src/serve/index.js";
import type { ScoreItem } from "../../src/serve/schemas.js";

const items: ScoreItem[] = [
  { reward: "math-answer", completion: "$\\boxed{2}$", example: { gold: "2" } },
  { reward: "math-answer", completion: "$\\boxed{3}$", example: { gold: "2" } },
];

describe("jobIdOf", () => {
  it("is sha256 of the four parts, hex, with no ':' (BullMQ ids)", () => {
    const want = createHash("sha256").update("req-1\u0000abc\u000064\u000032").digest("hex");
    expect(jobIdOf("req-1", "abc", 64, 32)).toBe(want);
    expect(want).toMatch(/^[0-9a-f]{64}$/);
  });

  it("changes with each part", () => {
    const base = jobIdOf("req-1", "abc", 0, 64);
    for (const other of [
      jobIdOf("req-2", "abc", 0, 64),
      jobIdOf("req-1", "abd", 0, 64),
      jobIdOf("req-1", "abc", 64, 64),
      jobIdOf("req-1", "abc", 0, 63),
    ]) {
      expect(other).not.toBe(base);
    }
    expect(jobIdOf("req-1", "abc", 0, 64)).toBe(base);
  });

  it("contentHashOf hashes the items' JSON, so other items give other job ids", () => {
    expect(contentHashOf(items)).toBe(createHash("sha256").update(JSON.stringify(items)).digest("hex"));
    expect(contentHashOf(items)).not.toBe(contentHashOf([items[1]!, items[0]!]));
    expect(contentHashOf(items)).not.toBe(contentHashOf(items.slice(0, 1)));
  });
});
