/**
 * One episode in the room world under its rules, command by command: the single definition that the environment
 * (src/envs/world/env.ts, which answers the policy's turns live) and the reward (./reward.ts, which replays the
 * recorded turns) both run, so the state the verifier checks is the state the policy saw.
 *
 * Rules (each handled and counted, never a crash):
 * - a state goal ends the episode as soon as it holds ("goal"); `answer` and `done` end it ("answer", "done");
 * - an invalid command (unparsable, or one that cannot apply) leaves the state unchanged and is answered with the
 *   reason; the `maxInvalid`-th one ends the episode ("invalid");
 * - a no-op (`look`) right after another no-op ends the episode ("stuck"): an agent that only looks is not acting;
 * - after `maxSteps` commands the episode ends ("steps").
 */
import { endsWhenMet, goalMet, type Goal } from "./goal.js";
import { observe } from "./render.js";
import { applyCommand, parseCommand, type WorldState } from "./world.js";

/** Episode limits. */
export interface EpisodeRules {
  /** Most commands (model turns) in an episode. */
  maxSteps: number;
  /** The episode ends at this many invalid commands. */
  maxInvalid: number;
}

/** Why an episode ended. */
export type EpisodeEnd = "goal" | "answer" | "done" | "invalid" | "stuck" | "steps";

/** The reply to one command. */
export interface WorldReply {
  /** The observation after the command (with "invalid: <reason>" first when it was invalid). */
  text: string;
  /** Set when the command was invalid. */
  invalid?: string;
  /** Set when the episode has ended. */
  end?: EpisodeEnd;
}

/** A running episode. */
export class WorldEpisode {
  state: WorldState;
  steps = 0;
  invalid = 0;
  noops = 0;
  answer: string | undefined;
  end: EpisodeEnd | null = null;
  private lastWasNoop = false;

  constructor(
    initial: WorldState,
    readonly goal: Goal,
    readonly rules: EpisodeRules,
  ) {
    this.state = initial;
  }

  /** Applies one turn's command text; throws only when called after the end. */
  step(text: string): WorldReply {
    if (this.end) throw new Error(`the episode has ended (${this.end})`);
    this.steps++;
    const cmd = parseCommand(text);
    let invalid: string | undefined;
    if ("error" in cmd) invalid = cmd.error;
    else {
      const out = applyCommand(this.state, cmd);
      if (out.invalid) invalid = out.invalid;
      else {
        this.state = out.state;
        const noop = cmd.verb === "look";
        if (noop) this.noops++;
        if (noop && this.lastWasNoop) this.end = "stuck";
        this.lastWasNoop = noop;
        if (out.ends) {
          this.answer = out.answer;
          this.end = cmd.verb === "answer" ? "answer" : "done";
        }
      }
    }
    if (invalid !== undefined) {
      this.invalid++;
      this.lastWasNoop = false;
      if (this.invalid >= this.rules.maxInvalid) this.end = "invalid";
    }
    if (!this.end && endsWhenMet(this.goal) && goalMet(this.state, this.goal)) this.end = "goal";
    if (!this.end && this.steps >= this.rules.maxSteps) this.end = "steps";
    return {
      text: `${invalid !== undefined ? `invalid: ${invalid}\n` : ""}${observe(this.state)}`,
      ...(invalid !== undefined ? { invalid } : {}),
      ...(this.end ? { end: this.end } : {}),
    };
  }

  /** The verifier's verdict on the episode so far. */
  get success(): boolean {
    return goalMet(this.state, this.goal, this.answer);
  }
}

/** Replays recorded turns (stopping where the episode ended) and returns the finished episode. */
export function replay(initial: WorldState, goal: Goal, rules: EpisodeRules, turns: readonly string[]): WorldEpisode {
  const ep = new WorldEpisode(initial, goal, rules);
  for (const t of turns) {
    if (ep.end) break;
    ep.step(t);
  }
  return ep;
}
