/**
 * bench/harness/turn-peer.ts: a peer in lock-step over two named pipes. Stand-in peers are short sh scripts (no
 * Python): one that answers every turn and counts them, one that fails with an error line, one that dies mid-run.
 * Each opens `done` for writing, then `go` for reading, as bench/peers/trl_grpo.py does.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TurnPeer } from "../../bench/harness/turn-peer.js";

/** Starts `sh -c body` with the pipes' paths as $1 (go) and $2 (done). */
function startSh(body: string): TurnPeer {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-turn-peer-"));
  const { go, done } = TurnPeer.paths(dir);
  return TurnPeer.start("sh", ["-c", `exec 3>"$2" 4<"$1"; ${body}`, "peer", go, done], dir);
}

describe("TurnPeer", () => {
  it("takes turns: each step() lets the peer run exactly one step, and finish() returns its stdout", async () => {
    // The peer prints the turn it ran, so its stdout shows that every go got exactly one step.
    const peer = startSh(
      `echo ready >&3; n=0; while read -r line <&4; do n=$((n+1)); echo "step $n"; echo done >&3; done`,
    );
    for (let i = 0; i < 3; i++) peer.step();
    expect(await peer.finish()).toBe("step 1\nstep 2\nstep 3\n");
  });

  it("throws the peer's error line, with its stderr", () => {
    const peer = startSh(
      `echo ready >&3; read -r line <&4; echo "bad things" >&2; echo "error ValueError: boom" >&3; sleep 5`,
    );
    expect(() => peer.step()).toThrow(
      /said "error ValueError: boom" where "done" was due; its stderr ends:\nbad things/,
    );
  });

  it("throws when the peer dies instead of answering, and when it fails before it is ready", async () => {
    const dies = startSh(`echo ready >&3; read -r line <&4; exit 3`);
    expect(() => dies.step()).toThrow(/closed its pipe \(it died\) where "done" was due/);
    expect(() => startSh(`echo "error ImportError: no trl" >&3`)).toThrow(/said "error ImportError: no trl"/);
  });

  it("finish() rejects when the peer exits with an error after its last turn", async () => {
    const peer = startSh(`echo ready >&3; read -r line <&4; echo done >&3; echo oops >&2; exit 2`);
    peer.step();
    await expect(peer.finish()).rejects.toThrow(/exited with 2; its stderr ends:\noops/);
  });
});
