/** The list of subcommands; each module exports `register(program)`. Add one line per command file. */
import type { Command } from "commander";
import { register as train } from "./train.js";
import { register as evalCommand } from "./eval.js";
import { register as sample } from "./sample.js";
import { register as tasks } from "./tasks.js";
import { register as demo } from "./demo.js";
import { register as rewardsCommand } from "./rewards.js";
import { register as carPlot } from "./car-plot.js";
import { register as serveRewards } from "./serve-rewards.js";
import { register as rewardWorker } from "./reward-worker.js";
import { register as data } from "./data.js";
import { register as serveModel } from "./serve.js";
import { register as exportCommand } from "./export.js";
import { register as dashboard } from "./dashboard.js";

export type RegisterCommand = (program: Command) => void;

export const commands: RegisterCommand[] = [
  train,
  evalCommand,
  sample,
  tasks,
  demo,
  rewardsCommand,
  carPlot,
  serveRewards,
  rewardWorker,
  data,
  serveModel,
  exportCommand,
  dashboard,
];
