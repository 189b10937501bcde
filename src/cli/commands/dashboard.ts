/**
 * `rlvr dashboard [dir]`: serves the live dashboard (docs/dashboard.md) over the run folders in `dir` (default
 * `runs`) until SIGINT or SIGTERM. It listens on 127.0.0.1 unless `--host` says otherwise, since the page shows
 * prompts, completions and configs. `trainDashboard` is what `rlvr train --dashboard` uses.
 */
import { existsSync, statSync } from "node:fs";
import type { Command } from "commander";
import {
  DASHBOARD_PORT,
  DashboardStartError,
  startDashboard,
  startDashboardThread,
  type DashboardThread,
  type RunningDashboard,
} from "../../serve/dashboard/index.js";
import { RlvrError } from "../../util/index.js";
import { withErrors } from "../errors.js";

/** A dashboard flag or folder the user must fix. */
export class DashboardOptionError extends RlvrError {}

/** Parses `--port`: an integer 0-65535 (0 picks a free port). */
export function parsePort(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < 0 || n > 65535) {
    throw new DashboardOptionError(`--port must be an integer from 0 to 65535, got "${value}"`);
  }
  return n;
}

/** Starts a dashboard over `dir`, which must be a folder. */
export async function dashboardFor(
  dir: string,
  opts: { port?: number; host?: string } = {},
): Promise<RunningDashboard> {
  if (!existsSync(dir)) {
    throw new DashboardOptionError(
      `dashboard: folder ${dir} does not exist; pass the folder of your runs (default runs)`,
    );
  }
  if (!statSync(dir).isDirectory()) {
    throw new DashboardOptionError(`dashboard: ${dir} is not a folder; pass the folder of your runs (default runs)`);
  }
  return startDashboard({ dir, port: opts.port ?? DASHBOARD_PORT, host: opts.host });
}

/**
 * `rlvr train --dashboard`: a dashboard over the run's parent folder (so other runs can be overlaid) on the default
 * port, or on a free one when that is taken; prints the URL that opens the run. It runs on a worker thread, since
 * training steps hold the main thread (thread.ts). The caller closes it.
 */
export async function trainDashboard(outDir: string, name: string): Promise<DashboardThread> {
  let dashboard: DashboardThread;
  try {
    dashboard = await startDashboardThread({ dir: outDir, port: DASHBOARD_PORT });
  } catch (err) {
    if (!(err instanceof DashboardStartError && err.code === "EADDRINUSE")) throw err;
    dashboard = await startDashboardThread({ dir: outDir, port: 0 });
  }
  console.log(`dashboard: ${dashboard.url}/#run=${encodeURIComponent(name)}`);
  return dashboard;
}

/** Registers `dashboard`. */
export function register(program: Command): void {
  program
    .command("dashboard")
    .description("live dashboard of training runs in a browser: charts, samples, configs (docs/dashboard.md)")
    .argument("[dir]", "folder of run folders, or one run folder", "runs")
    .option("--port <n>", `port (default ${DASHBOARD_PORT}; 0 picks a free one)`)
    .option("--host <address>", "address to listen on (default 127.0.0.1: this machine only)")
    .action(
      withErrors(async (dir: string, o: { port?: string; host?: string }) => {
        const port = o.port === undefined ? DASHBOARD_PORT : parsePort(o.port);
        const dashboard = await dashboardFor(dir, { port, host: o.host });
        console.log(`rlvr dashboard on ${dashboard.url} (runs in ${dir}); Ctrl-C stops it`);
        const stop = () => void dashboard.close().then(() => process.exit(0));
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      }),
    );
}
