/**
 * A reward worker process for queue-kill.test.ts: `startRewardWorker` (what `rlvr reward-worker` runs) with the
 * tests' registry, whose `slow` reward the CLI's built-in registry lacks. It prints `ready`, `start <value>` when it
 * begins scoring an item and `end <value>` when it has scored it, so a test can kill it mid-job.
 * Arguments: redis URL, queue name, concurrency, lock ms, stalled-check interval ms.
 */
import { startRewardWorker } from "../../src/serve/index.js";
import { slowRegistry } from "./queue-helpers.js";

const [redis, queue, concurrency, lockMs, stalledIntervalMs] = process.argv.slice(2);
const { registry } = slowRegistry((event) => console.log(event));
const worker = await startRewardWorker({
  redis: redis!,
  queue: queue!,
  rewards: registry,
  concurrency: Number(concurrency),
  lockMs: Number(lockMs),
  stalledIntervalMs: Number(stalledIntervalMs),
});
console.log("ready");
process.once("SIGTERM", () => void worker.close().then(() => process.exit(0)));
