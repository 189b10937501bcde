/**
 * The live dashboard (`rlvr dashboard [runs/]`, `rlvr train --dashboard`; docs/dashboard.md): a static page and a
 * small Fastify server that lists run folders and streams their JSONL logs over Server-Sent Events.
 */
import type { AddressInfo } from "node:net";
import { buildDashboard, type Dashboard, type DashboardOptions } from "./server.js";

export { buildDashboard, staticDir, type Dashboard, type DashboardOptions } from "./server.js";
export { RunStore, DashboardNotFound, LENGTH_CORRECT, LENGTH_WRONG, type RunSummary } from "./runs.js";
export { JsonlTail, parseLines, type TailRead } from "./jsonl-tail.js";
export { diffConfigs, flattenConfig, type ConfigChange } from "./config-diff.js";

/** Default port of `rlvr dashboard`. */
export const DASHBOARD_PORT = 8790;

/** A listening dashboard. */
export interface RunningDashboard extends Dashboard {
  /** Base URL, e.g. `http://127.0.0.1:8790`. */
  url: string;
  port: number;
  /** Ends open event streams and stops listening. */
  close(): Promise<void>;
}

/** Builds the dashboard and listens (`port: 0` picks a free port; host defaults to 127.0.0.1, this machine only). */
export async function startDashboard(
  options: DashboardOptions & { port?: number; host?: string },
): Promise<RunningDashboard> {
  const { port = DASHBOARD_PORT, host = "127.0.0.1", ...rest } = options;
  const dashboard = buildDashboard(rest);
  await dashboard.app.listen({ port, host });
  const address = dashboard.app.server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    ...dashboard,
    url: `http://${shown}:${address.port}`,
    port: address.port,
    close: () => dashboard.app.close(),
  };
}
export { startDashboardThread, DashboardStartError, type DashboardThread } from "./thread.js";
