/**
 * What the agent sees of the room world (./world.ts), as text: its room, what it holds, what is in the room (a
 * box's content only when the box is open) and the exits with their doors. The same text starts the prompt and
 * follows every command, so a policy that reads text (and later one that reads a rendered image of the same state)
 * gets the whole of what it needs from the current observation. Kept short: a small character-level policy reads
 * dozens of these per episode.
 *
 *   @red hold:blue key
 *   see: red ball, green box(open: white key)
 *   exits: east blue open, south white locked-blue
 */
import { DIRECTIONS, doorBetween, heldObject, neighbour, type Direction, type WorldState } from "./world.js";

/** The observation text of a state, ending with a newline. */
export function observe(w: WorldState): string {
  const held = heldObject(w);
  const here = w.objects.filter((o) => "room" in o.at && o.at.room === w.agent);
  const seen = here.map((o) => {
    if (o.kind !== "box") return o.name;
    if (!o.open) return `${o.name}(closed)`;
    const inside = w.objects.find((x) => "box" in x.at && x.at.box === o.name);
    return `${o.name}(open${inside ? `: ${inside.name}` : ""})`;
  });
  const exits: string[] = [];
  for (const dir of Object.keys(DIRECTIONS) as Direction[]) {
    const to = neighbour(w, w.agent, dir);
    const door = to === null ? undefined : doorBetween(w, w.agent, to);
    if (to === null || !door) continue;
    exits.push(`${dir} ${w.rooms[to]} ${door.state === "locked" ? `locked-${door.lock}` : door.state}`);
  }
  return (
    `@${w.rooms[w.agent]} hold:${held ? held.name : "none"}\n` +
    `see: ${seen.length ? seen.join(", ") : "nothing"}\n` +
    `exits: ${exits.length ? exits.join(", ") : "none"}\n`
  );
}
