/**
 * A peer trainer run in lock-step with rlvr's, one step each in turn (A B A B ...), for benches whose two sides are
 * whole training loops (bench:trl: TRL's GRPOTrainer against rlvr's `train`). A neighbour or a drift of the machine
 * then lands on both sides alike, as bench/harness/interleave.ts does for single repetitions.
 *
 * The protocol runs over two named pipes, so that rlvr's synchronous `onStep` hook can wait for the peer's step
 * without an event loop: the peer opens `done` for writing and then `go` for reading (the same order as here, so the
 * opens pair up), writes `ready` once it can train, then before each step reads a `go` line and after it writes a
 * `done` line. A peer that fails writes `error <message>` instead, or dies, which closes its end (end of file here);
 * either way `step()` throws with the tail of the peer's stderr. The peer's stdout and stderr go to files, not pipes:
 * while rlvr waits on `done`, Node reads nothing, and a full stdout pipe would stall the peer.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";

/** The pipes' paths, as the peer finds them in its settings (`turns`). */
export interface TurnPaths {
  go: string;
  done: string;
}

/** A running peer in lock-step with the caller. */
export class TurnPeer {
  private constructor(
    private readonly child: ChildProcess,
    private readonly logPath: string,
    private readonly errPath: string,
    private readonly exited: Promise<number | null>,
    private readonly doneFd: number,
    private readonly goFd: number,
  ) {}

  /** The pipes to create in `dir` (pass them to the peer in its settings before `start`). */
  static paths(dir: string): TurnPaths {
    return { go: join(dir, "turn-go"), done: join(dir, "turn-done") };
  }

  /**
   * Makes the pipes, starts `command args` with its output in `dir`/peer.log and peer.err, opens the pipes (blocking until the
   * peer has opened its ends) and waits for its `ready`.
   */
  static start(command: string, args: readonly string[], dir: string): TurnPeer {
    const p = TurnPeer.paths(dir);
    execFileSync("mkfifo", [p.go, p.done]);
    const logPath = join(dir, "peer.log");
    const errPath = join(dir, "peer.err");
    const [out, err] = [openSync(logPath, "w"), openSync(errPath, "w")];
    const child = spawn(command, args, { stdio: ["ignore", out, err] });
    closeSync(out);
    closeSync(err);
    const exited = new Promise<number | null>((ok) => {
      child.on("exit", (code) => ok(code));
      child.on("error", () => ok(-1));
    });
    const doneFd = openSync(p.done, "r");
    const goFd = openSync(p.go, "w");
    const peer = new TurnPeer(child, logPath, errPath, exited, doneFd, goFd);
    peer.expect("ready");
    return peer;
  }

  /** Lets the peer run one step and waits for it to finish (synchronously: the caller's loop stays paused). */
  step(): void {
    writeSync(this.goFd, "go\n");
    this.expect("done");
  }

  /** Closes the pipes and waits for the peer to exit; returns its stdout. Throws when it exits with an error. */
  async finish(): Promise<string> {
    closeSync(this.goFd);
    closeSync(this.doneFd);
    const code = await this.exited;
    if (code !== 0) throw new Error(`the peer exited with ${code}; its stderr ends:\n${this.stderrTail()}`);
    return readFileSync(this.logPath, "utf8");
  }

  private stderrTail(): string {
    return readFileSync(this.errPath, "utf8").slice(-4000);
  }

  /** Stops the peer (after a failure on this side). */
  kill(): void {
    this.child.kill("SIGKILL");
  }

  /** Reads one line from the peer; throws unless it is `want`. */
  private expect(want: string): void {
    const line = this.readLine();
    if (line === want) return;
    this.kill();
    const why = line === null ? "closed its pipe (it died)" : `said "${line.slice(0, 500)}"`;
    throw new Error(`the peer ${why} where "${want}" was due; its stderr ends:\n${this.stderrTail()}`);
  }

  private readLine(): string | null {
    const bytes: number[] = [];
    const one = Buffer.alloc(1);
    for (;;) {
      const n = readSync(this.doneFd, one, 0, 1, null);
      if (n === 0) return null;
      if (one[0] === 0x0a) return Buffer.from(bytes).toString("utf8");
      bytes.push(one[0]!);
    }
  }
}
