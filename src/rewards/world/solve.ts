/**
 * A breadth-first search solver for room-world tasks: the shortest command list that achieves a goal within a step
 * limit, or null. The task generator keeps a task only when this solver finishes it within the limit (the card's
 * "a human could finish it"), its answer is the gold trajectory for SFT, and its distance is the optional shaped
 * reward. A question is solved by walking into the asked room (the answer must be seen, not guessed) and answering.
 */
import { goalMet, truth, type Goal } from "./goal.js";
import {
  DIRECTIONS,
  applyCommand,
  heldObject,
  isInRoom,
  stateKey,
  type Command,
  type Direction,
  type WorldState,
} from "./world.js";

/** Most states the search visits before giving up (worlds are small; this bounds a pathological one). */
export const MAX_STATES = 200_000;

/** The command text of a command (what the policy writes). */
export function commandText(c: Command): string {
  switch (c.verb) {
    case "go":
      return `go ${c.dir}`;
    case "open-door":
      return `open ${c.dir}`;
    case "open-box":
      return `open ${c.box}`;
    case "take":
      return `take ${c.object}`;
    case "drop":
      return "drop";
    case "put":
      return `put ${c.box}`;
    case "look":
      return "look";
    case "answer":
      return `answer ${c.text}`;
    case "done":
      return "done";
  }
}

/** Every command that can apply in a state (moves, doors, boxes, objects), in a fixed order. */
export function validCommands(w: WorldState): Command[] {
  const out: Command[] = [];
  for (const dir of Object.keys(DIRECTIONS) as Direction[]) out.push({ verb: "go", dir }, { verb: "open-door", dir });
  for (const o of w.objects) {
    if (!isInRoom(w, o, w.agent)) continue;
    if (o.kind === "box") out.push({ verb: "open-box", box: o.name }, { verb: "put", box: o.name });
    else out.push({ verb: "take", object: o.name });
  }
  if (heldObject(w)) out.push({ verb: "drop" });
  return out.filter((c) => !applyCommand(w, c).invalid);
}

/** The shortest command texts that achieve `goal` from `start` in at most `maxSteps` commands, or null. */
export function solve(start: WorldState, goal: Goal, maxSteps: number): string[] | null {
  const done = (w: WorldState): string[] | null => {
    if (goal.kind !== "answer") return goalMet(w, goal) ? [] : null;
    const t = truth(w, goal.question);
    return t !== null && w.rooms[w.agent] === goal.question.room ? [`answer ${t}`] : null;
  };
  const first = done(start);
  if (first) return first.length <= maxSteps ? first : null;
  const seen = new Set([stateKey(start)]);
  let frontier: { w: WorldState; path: string[] }[] = [{ w: start, path: [] }];
  while (frontier.length > 0) {
    const next: typeof frontier = [];
    for (const { w, path } of frontier) {
      for (const c of validCommands(w)) {
        const s = applyCommand(w, c).state;
        const key = stateKey(s);
        if (seen.has(key)) continue;
        seen.add(key);
        if (seen.size > MAX_STATES) return null;
        const p = [...path, commandText(c)];
        const tail = done(s);
        if (tail) return p.length + tail.length <= maxSteps ? [...p, ...tail] : null;
        if (p.length < maxSteps) next.push({ w: s, path: p });
      }
    }
    frontier = next;
  }
  return null;
}
