/**
 * Tasks of the room world (./world.ts): a goal, its instruction text and its verifier, as in the SIMA 2 card (a task
 * is an initial state, a text instruction and a function that checks the end state). Five kinds:
 *   reach   "go to the blue room"                     the agent is in the room
 *   fetch   "pick up the red ball"                    the agent holds the object
 *   open    "open the green box" / "open the door between red and blue"
 *   place   "put the red ball in the green box"       the object is inside the box
 *   answer  "how many keys are on the blue room's floor?" / "what colour is the ball on the red room's floor?"
 *           the episode's answer equals the truth read from the end state
 * Answers are compared after trimming and lower-casing; a count may be a digit or a number word up to ten.
 */
import { objectNamed, doorBetween, type Colour, type ObjectKind, type WorldState } from "./world.js";

/** A grounded question about one room's floor. */
export type Question =
  { ask: "count"; what: "key" | "ball"; room: Colour } | { ask: "colour"; what: ObjectKind; room: Colour };

/** A goal of one of the five kinds. */
export type Goal =
  | { kind: "reach"; room: Colour }
  | { kind: "fetch"; object: string }
  | { kind: "open"; box: string }
  | { kind: "open"; door: [Colour, Colour] }
  | { kind: "place"; object: string; box: string }
  | { kind: "answer"; question: Question };

/** The goal kinds. */
export const GOAL_KINDS = ["reach", "fetch", "open", "place", "answer"] as const;
export type GoalKind = (typeof GOAL_KINDS)[number];

/** The instruction the agent is given. */
export function instruction(g: Goal): string {
  switch (g.kind) {
    case "reach":
      return `go to the ${g.room} room`;
    case "fetch":
      return `pick up the ${g.object}`;
    case "open":
      return "box" in g ? `open the ${g.box}` : `open the door between ${g.door[0]} and ${g.door[1]}`;
    case "place":
      return `put the ${g.object} in the ${g.box}`;
    case "answer":
      return g.question.ask === "count"
        ? `how many ${g.question.what}s are on the ${g.question.room} room's floor?`
        : `what colour is the ${g.question.what} on the ${g.question.room} room's floor?`;
  }
}

const WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];

/** The true answer of a question in a state, or null when it has none (no single object to name). */
export function truth(w: WorldState, q: Question): string | null {
  const room = w.rooms.indexOf(q.room);
  const onFloor = w.objects.filter((o) => o.kind === q.what && "room" in o.at && o.at.room === room);
  if (q.ask === "count") return String(onFloor.length);
  return onFloor.length === 1 ? onFloor[0]!.colour : null;
}

/** True when an answer text states the truth. */
export function answerMatches(answer: string, truthText: string): boolean {
  const a = answer
    .trim()
    .toLowerCase()
    .replace(/[.!]+$/, "");
  if (a === truthText) return true;
  const n = WORDS.indexOf(a);
  return n >= 0 && String(n) === truthText;
}

/** The verifier: does the end state (and the episode's answer, for questions) achieve the goal? */
export function goalMet(w: WorldState, g: Goal, answer?: string): boolean {
  switch (g.kind) {
    case "reach":
      return w.rooms[w.agent] === g.room;
    case "fetch": {
      const o = objectNamed(w, g.object);
      return o !== undefined && "hand" in o.at;
    }
    case "open": {
      if ("box" in g) return objectNamed(w, g.box)?.open === true;
      const [a, b] = g.door.map((c) => w.rooms.indexOf(c));
      return doorBetween(w, a!, b!)?.state === "open";
    }
    case "place": {
      const o = objectNamed(w, g.object);
      return o !== undefined && "box" in o.at && o.at.box === g.box;
    }
    case "answer": {
      const t = truth(w, g.question);
      return answer !== undefined && t !== null && answerMatches(answer, t);
    }
  }
}

/** A state goal ends the episode as soon as it holds; a question ends only with an answer. */
export function endsWhenMet(g: Goal): boolean {
  return g.kind !== "answer";
}

/** The object kinds a goal is about (for held-out compositions: "place:ball", "answer:key", ...). */
export function compositionOf(g: Goal): string {
  switch (g.kind) {
    case "reach":
      return "reach:room";
    case "fetch":
      return `fetch:${g.object.split(" ")[1]}`;
    case "open":
      return "box" in g ? "open:box" : "open:door";
    case "place":
      return `place:${g.object.split(" ")[1]}`;
    case "answer":
      return `answer:${g.question.ask}`;
  }
}

/** Whether a room named in a goal exists and the objects it names are in the world (a sanity check on golds). */
export function goalRefersToWorld(w: WorldState, g: Goal): boolean {
  const rooms = (cs: Colour[]) => cs.every((c) => w.rooms.includes(c));
  switch (g.kind) {
    case "reach":
      return rooms([g.room]);
    case "fetch":
      return objectNamed(w, g.object) !== undefined;
    case "open":
      return "box" in g ? objectNamed(w, g.box) !== undefined : rooms(g.door);
    case "place":
      return objectNamed(w, g.object) !== undefined && objectNamed(w, g.box) !== undefined;
    case "answer":
      return rooms([g.question.room]);
  }
}
