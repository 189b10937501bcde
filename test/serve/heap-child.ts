/**
 * Child of test/serve/heap.test.ts: applies the heap growing percent given as argv[2] (as `rlvr serve-rewards`
 * does at start-up), then allocates request-like garbage (batches that stay alive for the next 40 batches, so they
 * are promoted to the old generation) and prints the peak of V8's total heap size in MB.
 */
import { getHeapStatistics } from "node:v8";
import { applyHeapGrowingPercent } from "../../src/serve/heap.js";

applyHeapGrowingPercent(Number(process.argv[2]));
const live: object[][] = [];
let peak = 0;
for (let i = 0; i < 600; i++) {
  const batch = [];
  for (let k = 0; k < 2000; k++) batch.push({ s: `item ${i} ${k}`, n: [k, k + 1, k + 2] });
  live.push(batch);
  if (live.length > 40) live.shift();
  if (i % 10 === 0) peak = Math.max(peak, getHeapStatistics().total_heap_size);
}
console.log((peak / 2 ** 20).toFixed(1));
