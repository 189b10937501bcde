/**
 * A model's weights passed through a GGUF export type and back (`rlvr export --type f16|q8_0`), in place: what a
 * llama.cpp user of the exported file runs, measured with our own forward pass. Each matrix gets the type the GGUF
 * export gives it (`ggufTensorType`: 1-D norms and biases stay float32, Q8_0 only for rows a multiple of 32 wide,
 * else F16) and the export's own encoder, then is decoded back to float32. LoRA adapters are merged first, as every
 * export does. Departure: the llama q/k row permutation of the GGUF file is skipped; it moves whole rows, and Q8_0
 * blocks and F16 values never straddle rows, so the values are the same.
 */
import { mergeLoRA } from "../../engine/index.js";
import type { Transformer } from "../transformer.js";
import { GgmlType } from "./gguf-file.js";
import { ggufTensorType, type GgufExportType } from "./gguf.js";
import { decodeF16, decodeQ8_0, encodeF16, encodeQ8_0 } from "./quantize.js";

/** What `roundTripWeights` changed. */
export interface RoundTripReport {
  /** Parameters stored as Q8_0, F16 and F32 by the export. */
  q8_0: number;
  f16: number;
  f32: number;
  /** Largest absolute change of any weight. */
  maxAbsError: number;
}

/** Replaces every weight of `model` by its value after a GGUF export of type `type` (merging LoRA first). */
export function roundTripWeights(model: Transformer, type: GgufExportType): RoundTripReport {
  mergeLoRA(model);
  const report: RoundTripReport = { q8_0: 0, f16: 0, f32: 0, maxAbsError: 0 };
  for (const [, p] of model.namedParameters()) {
    const t = ggufTensorType(p.shape, type);
    if (t === GgmlType.F32) {
      report.f32++;
      continue;
    }
    const back = t === GgmlType.Q8_0 ? decodeQ8_0(encodeQ8_0(p.data)) : decodeF16(encodeF16(p.data));
    if (t === GgmlType.Q8_0) report.q8_0++;
    else report.f16++;
    for (let i = 0; i < back.length; i++)
      report.maxAbsError = Math.max(report.maxAbsError, Math.abs(back[i]! - p.data[i]!));
    p.data.set(back);
  }
  return report;
}
