/** Model export: GGUF for llama.cpp (./gguf.ts) and a transformers folder (./hf.ts). */
export {
  exportGguf,
  encodeModelGguf,
  ggufContents,
  ggufArchitecture,
  ggufTensorType,
  GGUF_TYPES,
  type GgufExportType,
} from "./gguf.js";
export type { GgufExportOptions } from "./gguf.js";
export { exportHf } from "./hf.js";
export { roundTripWeights, type RoundTripReport } from "./roundtrip.js";
