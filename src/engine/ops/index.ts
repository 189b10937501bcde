/** Every op of the engine, as plain functions over tensors. */
export * from "./elementwise.js";
export * from "./reduce.js";
export * from "./shape.js";
export * from "./matmul.js";
export * from "./nn.js";
