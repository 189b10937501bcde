/**
 * The room world of SIMA 2 in miniature (issue 12, docs/multi-turn.md "SIMA 2"): a seeded, deterministic grid of
 * coloured rooms joined by doors (open, closed, or locked by a key of a colour), with keys, balls and boxes (a box
 * holds at most one thing and is opened before use). One agent moves room to room and holds at most one object.
 *
 * Commands (one per model turn; words separated by spaces, case and extra spaces ignored):
 *   go north|south|east|west     through an open door
 *   open north|south|east|west   a closed door; a locked one opens if the agent holds a key of its colour
 *   open <colour> box            a closed box in the room
 *   take <colour> <kind>         a key or ball on the floor, or in an open box, of the room (hand must be free)
 *   drop                         the held object onto the floor
 *   put <colour> box             the held object into an open, empty box of the room
 *   look                         nothing changes (a no-op)
 *   answer <text>                ends the episode with an answer (grounded questions)
 *   done                         ends the episode
 * A command that cannot apply is invalid: the state does not change and the reason is returned. The world is pure
 * data and `applyCommand` a pure function (a new state), so the environment, the reward's replay and the search
 * solver share it. Rewards live in util-only code (DESIGN.md), so this file imports nothing of ours.
 */

/** Directions, with their (dx, dy) on the room grid (north is up, y grows southwards). */
export const DIRECTIONS = { north: [0, -1], south: [0, 1], east: [1, 0], west: [-1, 0] } as const;
export type Direction = keyof typeof DIRECTIONS;

/** Colours of rooms, doors' locks and objects. */
export const COLOURS = ["red", "blue", "green", "yellow", "purple", "white"] as const;
export type Colour = (typeof COLOURS)[number];

/** Object kinds; boxes are containers and cannot be carried. */
export type ObjectKind = "key" | "ball" | "box";

/** A door between two neighbouring rooms (by index); `lock` is the key colour of a locked door. */
export interface Door {
  a: number;
  b: number;
  state: "open" | "closed" | "locked";
  lock?: Colour;
}

/** Where an object is: on a room's floor, inside a box (by name), or in the agent's hand. */
export type Place = { room: number } | { box: string } | { hand: true };

/** An object; its name is "<colour> <kind>", unique in a world. */
export interface WorldObject {
  name: string;
  kind: ObjectKind;
  colour: Colour;
  at: Place;
  /** Boxes only: whether it is open. */
  open?: boolean;
}

/** A whole world state. Rooms are laid out row by row on a cols x rows grid. */
export interface WorldState {
  cols: number;
  rows: number;
  /** Colour (and name) of each room. */
  rooms: Colour[];
  doors: Door[];
  objects: WorldObject[];
  /** Index of the agent's room. */
  agent: number;
}

/** A parsed command. */
export type Command =
  | { verb: "go"; dir: Direction }
  | { verb: "open-door"; dir: Direction }
  | { verb: "open-box"; box: string }
  | { verb: "take"; object: string }
  | { verb: "drop" }
  | { verb: "put"; box: string }
  | { verb: "look" }
  | { verb: "answer"; text: string }
  | { verb: "done" };

/** Longest command text considered; longer turns are invalid (no parsing of giant strings). */
export const MAX_COMMAND_CHARS = 80;

/** Parses one turn's text into a command, or explains why it is not one. */
export function parseCommand(text: string): Command | { error: string } {
  const t = text.trim().toLowerCase().replace(/\s+/g, " ");
  if (t.length === 0) return { error: "empty command" };
  if (t.length > MAX_COMMAND_CHARS) return { error: `command longer than ${MAX_COMMAND_CHARS} characters` };
  const words = t.split(" ");
  const [verb, ...rest] = words;
  const dir = (w: string | undefined): Direction | null => (w && w in DIRECTIONS ? (w as Direction) : null);
  const objectName = (ws: string[]): string | null =>
    ws.length === 2 && (COLOURS as readonly string[]).includes(ws[0]!) && ["key", "ball", "box"].includes(ws[1]!)
      ? `${ws[0]} ${ws[1]}`
      : null;
  switch (verb) {
    case "go": {
      const d = rest.length === 1 ? dir(rest[0]) : null;
      return d ? { verb: "go", dir: d } : { error: "go needs one of north, south, east, west" };
    }
    case "open": {
      const d = rest.length === 1 ? dir(rest[0]) : null;
      if (d) return { verb: "open-door", dir: d };
      const name = objectName(rest);
      return name?.endsWith(" box") ? { verb: "open-box", box: name } : { error: "open needs a direction or a box" };
    }
    case "take": {
      const name = objectName(rest);
      return name ? { verb: "take", object: name } : { error: "take needs an object: <colour> key|ball" };
    }
    case "drop":
      return rest.length === 0 ? { verb: "drop" } : { error: "drop takes no object" };
    case "put": {
      const name = objectName(rest);
      return name?.endsWith(" box") ? { verb: "put", box: name } : { error: "put needs a box: <colour> box" };
    }
    case "look":
      return rest.length === 0 ? { verb: "look" } : { error: "look takes nothing" };
    case "answer":
      return rest.length > 0 ? { verb: "answer", text: rest.join(" ") } : { error: "answer needs a text" };
    case "done":
      return rest.length === 0 ? { verb: "done" } : { error: "done takes nothing" };
    default:
      return { error: `unknown command "${verb}"` };
  }
}

/** The room next to `room` in direction `dir`, or null at the grid's edge. */
export function neighbour(w: WorldState, room: number, dir: Direction): number | null {
  const [dx, dy] = DIRECTIONS[dir];
  const x = (room % w.cols) + dx,
    y = Math.floor(room / w.cols) + dy;
  return x >= 0 && x < w.cols && y >= 0 && y < w.rows ? y * w.cols + x : null;
}

/** The door between two rooms, if any. */
export function doorBetween(w: WorldState, a: number, b: number): Door | undefined {
  return w.doors.find((d) => (d.a === a && d.b === b) || (d.a === b && d.b === a));
}

/** The object the agent holds, if any. */
export function heldObject(w: WorldState): WorldObject | undefined {
  return w.objects.find((o) => "hand" in o.at);
}

/** An object by name. */
export function objectNamed(w: WorldState, name: string): WorldObject | undefined {
  return w.objects.find((o) => o.name === name);
}

/** True when the object is on the floor of `room` or inside a box there. */
export function isInRoom(w: WorldState, o: WorldObject, room: number): boolean {
  if ("room" in o.at) return o.at.room === room;
  if ("box" in o.at) {
    const box = objectNamed(w, o.at.box);
    return box !== undefined && isInRoom(w, box, room);
  }
  return false;
}

/** What applying a command did. */
export interface StepOutcome {
  state: WorldState;
  /** Why the command could not apply (the state is unchanged). */
  invalid?: string;
  /** The command ends the episode (answer, done); `answer` holds the answer text. */
  ends?: boolean;
  answer?: string;
}

/** Applies a command to a state (pure: the input is never modified). */
export function applyCommand(w: WorldState, c: Command): StepOutcome {
  const bad = (invalid: string): StepOutcome => ({ state: w, invalid });
  const next = (): WorldState => structuredClone(w);
  switch (c.verb) {
    case "go": {
      const to = neighbour(w, w.agent, c.dir);
      const door = to === null ? undefined : doorBetween(w, w.agent, to);
      if (to === null || !door) return bad(`no door ${c.dir}`);
      if (door.state !== "open") return bad(`the ${c.dir} door is ${door.state}`);
      const s = next();
      s.agent = to;
      return { state: s };
    }
    case "open-door": {
      const to = neighbour(w, w.agent, c.dir);
      const i = to === null ? -1 : w.doors.findIndex((d) => d === doorBetween(w, w.agent, to));
      if (i < 0) return bad(`no door ${c.dir}`);
      const door = w.doors[i]!;
      if (door.state === "open") return bad(`the ${c.dir} door is already open`);
      if (door.state === "locked" && heldObject(w)?.name !== `${door.lock} key`)
        return bad(`the ${c.dir} door is locked; it needs the ${door.lock} key in hand`);
      const s = next();
      s.doors[i]!.state = "open";
      return { state: s };
    }
    case "open-box": {
      const box = objectNamed(w, c.box);
      if (!box || !isInRoom(w, box, w.agent)) return bad(`no ${c.box} here`);
      if (box.open) return bad(`the ${c.box} is already open`);
      const s = next();
      objectNamed(s, c.box)!.open = true;
      return { state: s };
    }
    case "take": {
      const o = objectNamed(w, c.object);
      if (heldObject(w)) return bad(`hands full: drop the ${heldObject(w)!.name} first`);
      if (!o || !isInRoom(w, o, w.agent)) return bad(`no ${c.object} here`);
      if (o.kind === "box") return bad("boxes cannot be carried");
      if ("box" in o.at && !objectNamed(w, o.at.box)!.open) return bad(`no ${c.object} here`); // unseen inside
      const s = next();
      objectNamed(s, c.object)!.at = { hand: true };
      return { state: s };
    }
    case "drop": {
      const h = heldObject(w);
      if (!h) return bad("nothing in hand");
      const s = next();
      objectNamed(s, h.name)!.at = { room: w.agent };
      return { state: s };
    }
    case "put": {
      const h = heldObject(w);
      const box = objectNamed(w, c.box);
      if (!h) return bad("nothing in hand");
      if (!box || !isInRoom(w, box, w.agent)) return bad(`no ${c.box} here`);
      if (!box.open) return bad(`the ${c.box} is closed`);
      if (w.objects.some((o) => "box" in o.at && o.at.box === c.box)) return bad(`the ${c.box} is full`);
      const s = next();
      objectNamed(s, h.name)!.at = { box: c.box };
      return { state: s };
    }
    case "look":
      return { state: w };
    case "answer":
      return { state: w, ends: true, answer: c.text };
    case "done":
      return { state: w, ends: true };
  }
}

/** A canonical string of a state (the solver's visited set; equal states give equal keys). */
export function stateKey(w: WorldState): string {
  const objs = w.objects.map(
    (o) => `${o.name}@${"room" in o.at ? o.at.room : "box" in o.at ? o.at.box : "hand"}${o.open ? "+" : ""}`,
  );
  return `${w.agent}|${w.doors.map((d) => d.state[0]).join("")}|${objs.join(",")}`;
}
