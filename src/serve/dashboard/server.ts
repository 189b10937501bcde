/**
 * The live dashboard's server (issue 19; DESIGN.md surfaces): Fastify serving a static page (static/, no build step)
 * with uPlot from node_modules (so it works offline), a JSON API over the run folders (runs.ts), and one
 * Server-Sent Events stream per open run that tails metrics.jsonl and eval.jsonl and says when samples.jsonl grew.
 * Routes are listed in docs/dashboard.md. The files are polled (`pollMs`) rather than watched: `fs.watch` misses
 * appends on some file systems, and a poll of a stat per file is cheap.
 *
 * A stream opens with every complete line so far (`reset: true`), then sends new lines as they complete; a
 * reconnecting browser (EventSource retries on its own) gets the full state again, so nothing is lost or doubled.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { existsSync } from "node:fs";
import type { ServerResponse } from "node:http";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import { diffConfigs } from "./config-diff.js";
import { fileStamp, JsonlTail } from "./jsonl-tail.js";
import { DashboardNotFound, RunStore } from "./runs.js";

/** Dashboard settings. */
export interface DashboardOptions {
  /** Folder of run folders (or one run folder). */
  dir: string;
  /** How often open streams look for new lines, in ms (default 500). */
  pollMs?: number;
  /** Interval of SSE keep-alive comments, in ms (default 15000). */
  heartbeatMs?: number;
}

/** A built dashboard (not listening yet). */
export interface Dashboard {
  app: FastifyInstance;
  store: RunStore;
}

const STATIC_FILES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "charts.js": "text/javascript; charset=utf-8",
  "samples.js": "text/javascript; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
};

/** The static page's folder: next to this file under src/, or src/ beside dist/ when running compiled code. */
export function staticDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, "static"), join(here, "..", "..", "..", "src", "serve", "dashboard", "static")];
  const found = candidates.find((d) => existsSync(join(d, "index.html")));
  if (!found) throw new Error(`dashboard: static page not found (looked in ${candidates.join(", ")})`);
  return found;
}

/** uPlot's dist folder, resolved through Node's module resolution (the installed package, no CDN). */
function uplotDir(): string {
  return join(dirname(createRequire(import.meta.url).resolve("uplot/package.json")), "dist");
}

/** Builds the dashboard server over `options.dir`. */
export function buildDashboard(options: DashboardOptions): Dashboard {
  const { pollMs = 500, heartbeatMs = 15_000 } = options;
  const store = new RunStore(options.dir);
  const page = staticDir();
  const vendor: Record<string, [string, string]> = {
    "uPlot.esm.js": [join(uplotDir(), "uPlot.esm.js"), "text/javascript; charset=utf-8"],
    "uPlot.min.css": [join(uplotDir(), "uPlot.min.css"), "text/css; charset=utf-8"],
  };
  const app = Fastify({ logger: false });
  const streams = new Set<ServerResponse>();

  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    const status = err instanceof DashboardNotFound ? 404 : (err.statusCode ?? 500);
    void reply.code(status).send({ error: err.message });
  });
  app.setNotFoundHandler((req, reply) => void reply.code(404).send({ error: `no route ${req.method} ${req.url}` }));

  const sendFile = (reply: FastifyReply, path: string, type: string) =>
    reply.type(type).header("cache-control", "no-cache").send(readFileSync(path));
  app.get("/", (_req, reply) => sendFile(reply, join(page, "index.html"), STATIC_FILES["index.html"]!));
  app.get<{ Params: { file: string } }>("/static/:file", (req, reply) => {
    const type = STATIC_FILES[req.params.file];
    if (!type) throw new DashboardNotFound(`no static file ${req.params.file}`);
    return sendFile(reply, join(page, req.params.file), type);
  });
  app.get<{ Params: { file: string } }>("/vendor/:file", (req, reply) => {
    const hit = vendor[req.params.file];
    if (!hit) throw new DashboardNotFound(`no vendor file ${req.params.file}`);
    return sendFile(reply, hit[0], hit[1]);
  });

  app.get("/favicon.ico", (_req, reply) => reply.code(204).send());
  app.get("/api/runs", () => ({ dir: options.dir, runs: store.list() }));
  app.get<{ Params: { run: string } }>("/api/runs/:run/config", (req) => ({
    run: req.params.run,
    config: store.config(req.params.run),
    correctTerm: store.correctTerm(req.params.run),
  }));
  app.get<{ Params: { run: string } }>("/api/runs/:run/metrics", (req) => store.metrics(req.params.run));
  app.get<{ Params: { run: string } }>("/api/runs/:run/eval", (req) => store.evals(req.params.run));
  app.get<{ Params: { run: string }; Querystring: { step?: string } }>("/api/runs/:run/samples", (req) => {
    const { run } = req.params;
    if (req.query.step === undefined) return { steps: store.sampleSteps(run), derived: store.derived(run) };
    const step = Number(req.query.step);
    if (!Number.isInteger(step))
      throw Object.assign(new Error(`step must be an integer, got "${req.query.step}"`), { statusCode: 400 });
    return { step, groups: store.samplesAt(run, step) };
  });
  app.get<{ Querystring: { a?: string; b?: string } }>("/api/diff", (req) => {
    const { a, b } = req.query;
    if (!a || !b) throw Object.assign(new Error("diff needs two runs: /api/diff?a=<run>&b=<run>"), { statusCode: 400 });
    return { a, b, changes: diffConfigs(store.config(a), store.config(b)) };
  });

  app.get<{ Params: { run: string } }>("/api/runs/:run/events", (req, reply) => {
    const path = store.path(req.params.run);
    const res = reply.raw;
    reply.hijack();
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    streams.add(res);
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    const metrics = new JsonlTail(join(path, "metrics.jsonl"));
    const evals = new JsonlTail(join(path, "eval.jsonl"));
    let samplesStamp: string | null | undefined;
    let first = true;
    const poll = () => {
      for (const [event, tail] of [
        ["metrics", metrics],
        ["eval", evals],
      ] as const) {
        const r = tail.read();
        if (first || r.reset || r.records.length > 0 || r.skipped > 0) {
          send(event, { reset: first || r.reset, records: r.records, skipped: r.skipped });
        }
      }
      const stamp = fileStamp(join(path, "samples.jsonl"));
      if (stamp !== samplesStamp) {
        samplesStamp = stamp;
        send("samples", { steps: store.sampleSteps(req.params.run), derived: store.derived(req.params.run) });
      }
      first = false;
    };
    poll();
    const timer = setInterval(() => {
      try {
        poll();
      } catch (err) {
        send("problem", { error: err instanceof Error ? err.message : String(err) });
      }
    }, pollMs);
    const beat = setInterval(() => res.write(": keep-alive\n\n"), heartbeatMs);
    res.on("close", () => {
      clearInterval(timer);
      clearInterval(beat);
      streams.delete(res);
    });
  });

  // Open streams never end on their own; close them so app.close() does not wait on them.
  app.addHook("preClose", (done) => {
    for (const res of streams) res.end();
    done();
  });
  return { app, store };
}
