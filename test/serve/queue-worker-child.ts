/**
 * A reward worker process for queue-kill.test.ts: `startRewardWorker` (what `rlvr reward-worker` runs) with the
 * tests' registry, whose `slow` reward the CLI's built-in registry lacks. It prints `ready`, `start <value>` when it
 * begins scoring an item, `end <value>` when it has scored it and `saved <n>` when a job in hand has saved n results,
 * so a test can kill it mid-job.
 * Arguments: redis URL, queue name, concurrency, lock ms, stalled-check interval ms, progress-save interval ms.
 */
import { startRewardWorker } from "../../src/serve/index.js";
import { slowRegistry } from "./queue-helpers.js";

const [redis, queue, concurrency, lockMs, stalledIntervalMs, progressMs = "1000"] = process.argv.slice(2);
const { registry } = slowRegistry((event) => console.log(event));
const worker = await startRewardWorker({
  redis: redis!,
  queue: queue!,
  rewards: registry,
  concurrency: Number(concurrency),
  lockMs: Number(lockMs),
  stalledIntervalMs: Number(stalledIntervalMs),
  progressMs: Number(progressMs),
  onSaved: (_job, saved) => console.log(`saved ${saved}`),
});
console.log("ready");
process.once("SIGTERM", () => void worker.close().then(() => process.exit(0)));
