/**
 * The body of the dashboard's worker thread (thread.ts): starts the dashboard with the options it was given, posts
 * `{url}` (or `{error, code}`), and closes it when the parent posts "close".
 */
import { parentPort, workerData } from "node:worker_threads";
import { startDashboard } from "./index.js";

const port = parentPort!;
try {
  const dashboard = await startDashboard(workerData as Parameters<typeof startDashboard>[0]);
  port.on("message", (msg) => {
    if (msg === "close") void dashboard.close().finally(() => port.close());
  });
  port.postMessage({ url: dashboard.url });
} catch (err) {
  const e = err as NodeJS.ErrnoException;
  port.postMessage({ error: e?.message ?? String(err), code: e?.code });
  port.close();
}
