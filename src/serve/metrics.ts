/**
 * Prometheus metrics of the reward service (prom-client), one registry per server so that several servers in one
 * process (tests) never share counts. Names and labels are listed in docs/reward-service.md "Metrics".
 *
 * Sandbox counters are read from the worker pool at scrape time: the pool keeps its own totals (spawns, and the
 * timeouts, memory kills, crashes and deaths that each cost a restart), and a scrape adds what moved since the last.
 * With a Redis queue (`--redis`), the queue's depth is read from Redis at scrape time the same way.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { PoolStats } from "../rewards/sandbox/pool.js";
import type { QueueSnapshot } from "./queue-scorer.js";
import type { ItemResult } from "./schemas.js";

/** What the metrics read of a sandbox pool; null while none has started. */
export type PoolSnapshot = (PoolStats & { queued: number; size: number }) | null;

/** Latency buckets (seconds) from a fast maths check to a sandboxed solver run. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Restart causes: the pool counter each one reads. */
const RESTART_CAUSES = { timeout: "timeouts", memory: "overMemory", crashed: "crashed", died: "workerDied" } as const;

/** An item label's counter (per outcome) and latency histogram, bound once. */
interface ItemChildren {
  count: Counter.Internal;
  seconds: Histogram.Internal<"reward">;
}

/** The service's metrics and the registry that renders them. */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<"route" | "status">;
  readonly requestSeconds: Histogram<"route">;
  readonly items: Counter<"reward" | "outcome">;
  readonly itemSeconds: Histogram<"reward">;
  readonly errors: Counter<"code">;
  readonly requestsInFlight: Gauge;
  readonly itemsInFlight: Gauge;
  readonly heapCollections: Counter;
  readonly heapCollectionSeconds: Counter;
  /**
   * The item counters and histogram per label, looked up once: prom-client hashes the label set on every call by
   * labels, which per item was a sizeable share of the server's allocation. Bounded: labels are known reward and task
   * names, `(unknown)`, and three outcomes.
   */
  private readonly itemChildren = new Map<string, ItemChildren>();

  constructor(poolStats: () => PoolSnapshot) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: "rlvr_serve_requests_total",
      help: "HTTP requests answered, by route and status code",
      labelNames: ["route", "status"],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: "rlvr_serve_request_seconds",
      help: "time from request to answer, by route",
      labelNames: ["route"],
      buckets: BUCKETS,
      registers,
    });
    this.items = new Counter({
      name: "rlvr_serve_items_total",
      help: "items answered, by reward (or task:<name>) and outcome (scored, unscorable, error)",
      labelNames: ["reward", "outcome"],
      registers,
    });
    this.itemSeconds = new Histogram({
      name: "rlvr_serve_item_seconds",
      help: "time to score one item, by reward (or task:<name>)",
      labelNames: ["reward"],
      buckets: BUCKETS,
      registers,
    });
    this.errors = new Counter({
      name: "rlvr_serve_errors_total",
      help: "errors by code: item errors (timeout, reward-failed, ...) and request errors (bad-request, too-busy, ...)",
      labelNames: ["code"],
      registers,
    });
    this.requestsInFlight = new Gauge({
      name: "rlvr_serve_requests_in_flight",
      help: "score requests admitted and not yet answered (429 beyond the concurrency limit)",
      registers,
    });
    this.itemsInFlight = new Gauge({
      name: "rlvr_serve_items_in_flight",
      help: "items being scored now",
      registers,
    });
    this.heapCollections = new Counter({
      name: "rlvr_serve_heap_collections_total",
      help: "full garbage collections run by the heap budget (--heap-budget-mb)",
      registers,
    });
    this.heapCollectionSeconds = new Counter({
      name: "rlvr_serve_heap_collection_seconds_total",
      help: "time spent in the heap budget's full garbage collections",
      registers,
    });
    this.sandboxMetrics(poolStats);
    collectDefaultMetrics({ register: this.registry });
  }

  /** Counts one answered item: in flight −1, items by label and outcome, its seconds, and its error code if any. */
  itemDone(label: string, result: ItemResult, seconds: number): void {
    this.itemsInFlight.dec();
    const outcome = "error" in result ? "error" : result.score === null ? "unscorable" : "scored";
    const key = `${label}\u0000${outcome}`;
    let c = this.itemChildren.get(key);
    if (!c) {
      c = { count: this.items.labels({ reward: label, outcome }), seconds: this.itemSeconds.labels({ reward: label }) };
      this.itemChildren.set(key, c);
    }
    c.count.inc();
    c.seconds.observe(seconds);
    if ("error" in result) this.errors.inc({ code: result.error.code });
  }

  /** Redis queue gauges, read when scraped (`rlvr serve-rewards --redis`). */
  queueMetrics(read: () => Promise<QueueSnapshot>): void {
    const registers = [this.registry];
    let last: Promise<QueueSnapshot> | null = null;
    // One read per scrape serves every gauge: the first collect() starts it, the others share it.
    const snapshot = () => (last ??= read().finally(() => setImmediate(() => (last = null))));
    const gauge = (name: string, help: string, pick: (s: QueueSnapshot) => number) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          this.set(pick(await snapshot()));
        },
      });
    gauge("rlvr_serve_queue_up", "1 while Redis answers, 0 while it is unreachable", (s) => (s.up ? 1 : 0));
    gauge("rlvr_serve_queue_depth", "jobs waiting in the Redis queue for a worker (all servers)", (s) => s.waiting);
    gauge("rlvr_serve_queue_active", "jobs being scored by workers now (all servers)", (s) => s.active);
    gauge("rlvr_serve_queue_awaiting", "items this server waits on for a worker's result", (s) => s.awaiting);
    let readded = 0;
    new Counter({
      name: "rlvr_serve_queue_readded_total",
      help: "jobs this server re-added after Redis lost them (a restart without persistence)",
      registers,
      async collect() {
        const s = await snapshot();
        this.inc(s.readded - readded);
        readded = s.readded;
      },
    });
  }

  /** Pool gauges and counters, read when scraped. */
  private sandboxMetrics(poolStats: () => PoolSnapshot): void {
    const registers = [this.registry];
    let seen: PoolStats = { spawned: 0, timeouts: 0, overMemory: 0, crashed: 0, workerDied: 0 };
    /** Advances `seen` to the pool's totals; a smaller total means a new pool, whose counts are all new. */
    const delta = (s: PoolStats, key: keyof PoolStats): number => (s[key] >= seen[key] ? s[key] - seen[key] : s[key]);
    // Registered first, so its collect() brings both counters up to date before either is rendered.
    const restarts: Counter<"cause"> = new Counter({
      name: "rlvr_sandbox_restarts_total",
      help: "sandbox worker processes replaced, by cause (timeout, memory, crashed, died)",
      labelNames: ["cause"],
      registers,
      collect() {
        const s = poolStats();
        if (!s) return;
        for (const [cause, key] of Object.entries(RESTART_CAUSES)) restarts.inc({ cause }, delta(s, key));
        spawned.inc(delta(s, "spawned"));
        seen = { ...s };
      },
    });
    const spawned = new Counter({
      name: "rlvr_sandbox_spawned_total",
      help: "sandbox worker processes started",
      registers,
    });
    new Gauge({
      name: "rlvr_sandbox_queue_depth",
      help: "sandboxed jobs waiting for a free worker process",
      registers,
      collect() {
        this.set(poolStats()?.queued ?? 0);
      },
    });
    new Gauge({
      name: "rlvr_sandbox_workers",
      help: "sandbox worker processes in the pool (0 until a code-running reward first runs)",
      registers,
      collect() {
        this.set(poolStats()?.size ?? 0);
      },
    });
  }
}
