/**
 * Helpers of the reward-service tests: a server on 127.0.0.1 with an ephemeral port, Node's fetch as the client,
 * and a private reward registry with test-only rewards (one that waits on a gate the test opens, one that throws).
 */
import { z } from "zod";
import { RewardRegistry } from "../../src/rewards/index.js";
import { startRewardServer, type RunningRewardServer } from "../../src/serve/index.js";
import type { RewardServerConfig } from "../../src/serve/index.js";

/** Starts a server on an ephemeral loopback port; the shared sandbox pool stays open for the other tests. */
export function start(config: RewardServerConfig = {}): Promise<RunningRewardServer> {
  return startRewardServer({ port: 0, host: "127.0.0.1", keepPool: true, ...config });
}

/** POSTs JSON (or a raw string) to `path`; returns the status, headers and parsed body. */
export async function post(
  server: RunningRewardServer,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** GETs `path`; JSON bodies are parsed, others returned as text. */
export async function get(
  server: RunningRewardServer,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const res = await fetch(server.url + path, { headers });
  const text = await res.text();
  const isJson = (res.headers.get("content-type") ?? "").includes("json");
  return { status: res.status, headers: res.headers, body: isJson ? JSON.parse(text) : text, text };
}

/** A promise the test resolves by hand. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** A private registry: `echo` (score = completion length × factor), `throws`, and `wait` (resolves at the gate). */
export function testRegistry(wait: Promise<void>): { registry: RewardRegistry; started: () => number } {
  const registry = new RewardRegistry();
  let started = 0;
  registry.register({
    name: "echo",
    description: "test: the completion's length times factor",
    options: z.object({ factor: z.number().default(1) }).strict(),
    score: ({ completion }, o: { factor: number }) => ({ score: completion.length * o.factor, terms: { len: 1 } }),
  });
  registry.register({
    name: "throws",
    description: "test: always throws",
    options: z.object({}).strict(),
    score: () => {
      throw new Error("boom from the checker");
    },
  });
  registry.register({
    name: "wait",
    description: "test: scores 1 once the test opens its gate",
    options: z.object({}).strict(),
    score: async () => {
      started++;
      await wait;
      return { score: 1, terms: {} };
    },
  });
  return { registry, started: () => started };
}

/** Reads one sample of a Prometheus text exposition (0 when absent), e.g. `rlvr_serve_items_total{...}`. */
export function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return 0;
}

/** Polls `check` once per event-loop turn (bounded by count, not time) until it holds. */
export async function until(check: () => Promise<boolean> | boolean, tries = 2000): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error("condition never held");
}
