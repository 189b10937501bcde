/**
 * A seeded generator of room-world tasks (src/rewards/world/; SIMA 2 in miniature, docs/multi-turn.md): a layout of
 * 2 to 6 coloured rooms on a grid, doors along a random spanning tree (plus sometimes one more), some closed or
 * locked, the keys that open the locked ones, a few balls, keys and boxes (some closed, some holding a thing), the
 * agent's start, and a goal of one of the five kinds. A draw is kept only when the breadth-first solver finishes it
 * within the step limit and needs at least `minSteps` commands; the solver's commands are the gold.
 */
import { Rng } from "../util/rng.js";
import {
  COLOURS,
  instruction,
  isInRoom,
  neighbour,
  solve,
  truth,
  type Colour,
  type Door,
  type Goal,
  type GoalKind,
  type ObjectKind,
  type Question,
  type WorldObject,
  type WorldState,
} from "../rewards/world/index.js";

/** Room grids by size (cols x rows). */
const LAYOUTS: [number, number][] = [
  [2, 1],
  [1, 2],
  [3, 1],
  [2, 2],
  [3, 2],
];

/** Generator settings (the "sima" task's options carry them). */
export interface WorldGenSettings {
  maxRooms: number;
  closedShare: number;
  lockedShare: number;
  extraObjects: number;
  maxSteps: number;
  /** Fewest commands a kept task needs (its shortest solution). */
  minSteps: number;
  kinds: readonly GoalKind[];
}

/** A drawn task: its world, goal and the solver's commands. */
export interface DrawnWorldTask {
  world: WorldState;
  goal: Goal;
  solution: string[];
}

/** The layout's canonical key (rooms, doors, objects; not the agent or the goal): decides the held-out split. */
export function layoutKey(w: WorldState): string {
  return JSON.stringify([w.cols, w.rows, w.rooms, w.doors, w.objects]);
}

/** Draws one world (not yet checked for a goal). */
export function drawWorld(rng: Rng, s: WorldGenSettings): WorldState {
  const layouts = LAYOUTS.filter(([c, r]) => c * r <= s.maxRooms);
  const [cols, rows] = rng.choice(layouts);
  const n = cols * rows;
  const rooms = rng.shuffle([...COLOURS]).slice(0, n) as Colour[];
  // Doors: a random spanning tree over the grid (randomised Prim), then perhaps one extra door.
  const w: WorldState = { cols, rows, rooms, doors: [], objects: [], agent: rng.int(n) };
  const inTree = new Set([rng.int(n)]);
  const dirs = ["north", "south", "east", "west"] as const;
  const edges = (room: number) => dirs.map((d) => neighbour(w, room, d)).filter((x): x is number => x !== null);
  while (inTree.size < n) {
    const frontier: [number, number][] = [];
    for (const a of inTree) for (const b of edges(a)) if (!inTree.has(b)) frontier.push([a, b]);
    const [a, b] = rng.choice(frontier);
    inTree.add(b);
    w.doors.push({ a: Math.min(a, b), b: Math.max(a, b), state: "open" });
  }
  const spare: [number, number][] = [];
  for (let a = 0; a < n; a++)
    for (const b of edges(a)) if (a < b && !w.doors.some((d) => d.a === a && d.b === b)) spare.push([a, b]);
  if (spare.length && rng.random() < 0.3) {
    const [a, b] = rng.choice(spare);
    w.doors.push({ a, b, state: "open" });
  }
  const used = { key: new Set<Colour>(), ball: new Set<Colour>(), box: new Set<Colour>() };
  const colourFor = (kind: ObjectKind): Colour | null => {
    const free = COLOURS.filter((c) => !used[kind].has(c));
    if (!free.length) return null;
    const c = rng.choice(free);
    used[kind].add(c);
    return c;
  };
  for (const d of w.doors as Door[]) {
    const u = rng.random();
    if (u < s.lockedShare) {
      const c = colourFor("key");
      if (c) {
        d.state = "locked";
        d.lock = c;
        w.objects.push({ name: `${c} key`, kind: "key", colour: c, at: { room: rng.int(n) } });
      }
    } else if (u < s.lockedShare + s.closedShare) d.state = "closed";
  }
  const extras = 1 + rng.int(s.extraObjects + 1);
  for (let i = 0; i < extras; i++) {
    const kind = rng.choice(["key", "ball", "ball", "box"] as ObjectKind[]);
    const c = colourFor(kind);
    if (!c) continue;
    const o: WorldObject = { name: `${c} ${kind}`, kind, colour: c, at: { room: rng.int(n) } };
    if (kind === "box") o.open = rng.random() < 0.4;
    w.objects.push(o);
  }
  // Sometimes a loose key or ball starts inside a box of its room.
  for (const box of w.objects.filter((o) => o.kind === "box")) {
    const loose = w.objects.filter(
      (o) => o.kind !== "box" && "room" in o.at && isInRoom(w, o, (box.at as { room: number }).room),
    );
    if (loose.length && rng.random() < 0.5) rng.choice(loose).at = { box: box.name };
  }
  return w;
}

/** Draws a goal of `kind` for a world, or null when the world has nothing to ask it about. */
export function drawGoal(rng: Rng, w: WorldState, kind: GoalKind): Goal | null {
  const portable = w.objects.filter((o) => o.kind !== "box");
  const boxes = w.objects.filter((o) => o.kind === "box");
  switch (kind) {
    case "reach": {
      const other = w.rooms.filter((_, i) => i !== w.agent);
      return other.length ? { kind, room: rng.choice(other) } : null;
    }
    case "fetch":
      return portable.length ? { kind, object: rng.choice(portable).name } : null;
    case "open": {
      const closedBoxes = boxes.filter((b) => !b.open);
      const shut = w.doors.filter((d) => d.state !== "open");
      const choices: Goal[] = [
        ...closedBoxes.map((b) => ({ kind, box: b.name }) as Goal),
        ...shut.map((d) => ({ kind, door: [w.rooms[d.a]!, w.rooms[d.b]!] }) as Goal),
      ];
      return choices.length ? rng.choice(choices) : null;
    }
    case "place": {
      if (!portable.length || !boxes.length) return null;
      return { kind, object: rng.choice(portable).name, box: rng.choice(boxes).name };
    }
    case "answer": {
      const room = rng.choice(w.rooms);
      const q: Question =
        rng.random() < 0.5
          ? { ask: "count", what: rng.choice(["key", "ball"] as const), room }
          : { ask: "colour", what: rng.choice(["key", "ball", "box"] as const), room };
      return truth(w, q) === null ? null : { kind, question: q };
    }
  }
}

/**
 * Picks a goal kind (uniformly, so every kind is equally common), then draws worlds and goals of that kind until one
 * is solvable in minSteps..maxSteps commands (at most `tries` draws), or returns null.
 */
export function drawTask(rng: Rng, s: WorldGenSettings, tries = 200): DrawnWorldTask | null {
  const kind = rng.choice([...s.kinds]);
  for (let i = 0; i < tries; i++) {
    const world = drawWorld(rng, s);
    const goal = drawGoal(rng, world, kind);
    if (!goal) continue;
    const solution = solve(world, goal, s.maxSteps);
    if (solution && solution.length >= Math.max(1, s.minSteps)) return { world, goal, solution };
  }
  return null;
}

/** The task's prompt: the instruction, then the first observation and the command marker. */
export function worldPrompt(goal: Goal, firstObservation: string): string {
  return `task: ${instruction(goal)}\n${firstObservation}> `;
}
