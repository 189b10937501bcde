/**
 * The rlvr package entry. Each layer is a namespace (`import { algorithms } from "rlvr"`) and a subpath
 * (`import { computeAdvantages } from "rlvr/algorithms"`); the rewards and tasks subpaths load no tensor code.
 */
export * as util from "./util/index.js";
export * as engine from "./engine/index.js";
export * as models from "./models/index.js";
export * as sampling from "./sampling/index.js";
export * as rewards from "./rewards/index.js";
export * as tasks from "./tasks/index.js";
export * as rollout from "./rollout/index.js";
export * as algorithms from "./algorithms/index.js";
export * as trainer from "./trainer/index.js";
