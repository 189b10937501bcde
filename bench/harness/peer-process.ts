/**
 * A peer (PyTorch, TRL) kept running as a child process and asked for one measurement at a time, so that a bench can
 * interleave the peer's repetitions with rlvr's (interleave.ts) instead of timing one side after the other.
 *
 * Protocol, JSON lines: each request is one line `{"id": n, ...fields}` on the child's stdin; the child answers with
 * one line `{"id": n, "value": ...}` or `{"id": n, "error": "..."}` on stdout. Other stdout lines (the peer's own
 * prints, a library's warnings) go to `onLog`. If the child exits, every pending call fails with its exit code and
 * the tail of its stderr; a call after that fails at once.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

/** How the child is started and where its other output goes. */
export interface PeerOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Called with each stdout line that is not an answer (default: ignored). */
  onLog?(line: string): void;
}

/** How much of the child's stderr an error quotes. */
const STDERR_TAIL = 2000;

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/** A running peer; see the file comment. */
export class PeerProcess {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private stderr = "";
  private exited: Error | null = null;
  private readonly done: Promise<void>;

  private constructor(command: string, args: readonly string[], opts: PeerOptions) {
    this.child = spawn(command, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr!.on("data", (d: Buffer) => (this.stderr = (this.stderr + String(d)).slice(-STDERR_TAIL)));
    createInterface({ input: this.child.stdout! }).on("line", (line) => this.onLine(line, opts.onLog));
    this.done = new Promise((resolve) => {
      const fail = (why: string) => {
        this.exited = new Error(`peer ${command} ${why}${this.stderr ? `: ${this.stderr.trim()}` : ""}`);
        for (const p of this.pending.values()) p.reject(this.exited);
        this.pending.clear();
        resolve();
      };
      this.child.once("error", (err) => fail(`failed to start (${err.message})`));
      this.child.once("close", (code, signal) => fail(`exited (${signal ?? `code ${code}`})`));
    });
  }

  /** Starts `command args` as a peer. */
  static start(command: string, args: readonly string[], opts: PeerOptions = {}): PeerProcess {
    return new PeerProcess(command, args, opts);
  }

  /** Sends one request and resolves to the answer's `value` (rejects with its `error`, or if the child exits). */
  call<T = number>(request: Record<string, unknown>): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.stdin!.write(JSON.stringify({ ...request, id }) + "\n");
    });
  }

  /** Closes the child's stdin (its signal to finish) and waits for it to exit. */
  async close(): Promise<void> {
    this.child.stdin!.end();
    await this.done;
  }

  private onLine(line: string, onLog?: (line: string) => void): void {
    const msg = answerOf(line);
    const waiting = msg ? this.pending.get(msg.id) : undefined;
    if (!msg || !waiting) {
      onLog?.(line);
      return;
    }
    this.pending.delete(msg.id);
    if (msg.error !== undefined) waiting.reject(new Error(`peer: ${String(msg.error)}`));
    else waiting.resolve(msg.value);
  }
}

/** An answer line's fields, or null for a line that is not a JSON object with a numeric id. */
function answerOf(line: string): { id: number; value?: unknown; error?: unknown } | null {
  if (!line.startsWith("{")) return null;
  try {
    const msg = JSON.parse(line) as { id?: unknown };
    return typeof msg.id === "number" ? (msg as { id: number }) : null;
  } catch {
    return null;
  }
}
