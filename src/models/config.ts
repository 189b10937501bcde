/**
 * The transformer config: one zod schema (fields documented once, here) and the mapping to and from Hugging
 * Face `config.json` field names.
 *
 * Two shapes share one config. `gpt2`: learned positions, LayerNorm with bias, GELU (tanh) MLP, biases on every
 * linear. `llama`: RoPE, RMSNorm, SwiGLU MLP, grouped-query attention, no biases except optional q/k/v biases
 * (`qkvBias`, which is what makes a Qwen2). Llama-shaped configs are written with Hugging Face field names
 * (`hidden_size`, `num_key_value_heads`, ...) so a saved checkpoint opens in `transformers` as-is; GPT-shaped ones
 * keep the same names under `model_type: "rlvr-gpt2"`, since their tensors follow our layout, not HF's GPT-2.
 */
import { z } from "zod";
import { ConfigError } from "../util/index.js";

/**
 * Sanity bounds of the hyper-parameters: well above any model this engine can train or load (Llama 3 405B has
 * dModel 16384, dFf 53248, 126 layers, vocab 128256), well below sizes whose allocation would abort the process.
 */
export const BOUNDS = {
  vocabSize: 1 << 22,
  dModel: 1 << 16,
  nLayers: 1024,
  nHeads: 1024,
  headDim: 4096,
  dFf: 1 << 18,
  maxSeqLen: 1 << 20,
};
/** Float32Array elements of one tensor at most (the engine indexes with 32-bit signed integers). */
const MAX_TENSOR_ELEMENTS = 2 ** 31 - 1;

/** Validated transformer hyper-parameters. */
export const TransformerConfigSchema = z
  .strictObject({
    arch: z
      .enum(["gpt2", "llama"])
      .describe("gpt2: learned positions, LayerNorm, GELU, biases; llama: RoPE, RMSNorm, SwiGLU, GQA"),
    vocabSize: z.number().int().positive().max(BOUNDS.vocabSize).describe("rows of the embedding and the output head"),
    dModel: z.number().int().positive().max(BOUNDS.dModel).describe("hidden width (HF hidden_size)"),
    nLayers: z.number().int().positive().max(BOUNDS.nLayers).describe("transformer blocks (HF num_hidden_layers)"),
    nHeads: z.number().int().positive().max(BOUNDS.nHeads).describe("query heads (HF num_attention_heads)"),
    nKvHeads: z
      .number()
      .int()
      .positive()
      .max(BOUNDS.nHeads)
      .describe("key/value heads, divides nHeads; < nHeads is grouped-query attention (HF num_key_value_heads)"),
    headDim: z
      .number()
      .int()
      .positive()
      .max(BOUNDS.headDim)
      .optional()
      .describe("per-head width; default dModel / nHeads (HF head_dim)"),
    dFf: z.number().int().positive().max(BOUNDS.dFf).describe("MLP hidden width (HF intermediate_size)"),
    maxSeqLen: z
      .number()
      .int()
      .positive()
      .max(BOUNDS.maxSeqLen)
      .describe("longest sequence: size of the learned position table (gpt2) or HF max_position_embeddings"),
    ropeTheta: z.number().positive().default(10000).describe("RoPE base frequency (llama; HF rope_theta)"),
    normEps: z.number().positive().default(1e-5).describe("epsilon of LayerNorm/RMSNorm (HF rms_norm_eps)"),
    tieEmbeddings: z
      .boolean()
      .default(true)
      .describe("output head shares the token embedding (HF tie_word_embeddings)"),
    qkvBias: z.boolean().default(false).describe("biases on q/k/v projections (llama shape; true for Qwen2)"),
    dropout: z
      .number()
      .min(0)
      .lt(1)
      .default(0)
      .describe("dropout on attention/MLP outputs and embeddings while training"),
  })
  .superRefine((c, ctx) => {
    if (c.nHeads % c.nKvHeads !== 0)
      ctx.addIssue({
        code: "custom",
        path: ["nKvHeads"],
        message: `nKvHeads ${c.nKvHeads} must divide nHeads ${c.nHeads}`,
      });
    if (c.headDim === undefined && c.dModel % c.nHeads !== 0)
      ctx.addIssue({
        code: "custom",
        path: ["nHeads"],
        message: `nHeads ${c.nHeads} must divide dModel ${c.dModel} (or set headDim)`,
      });
    if (c.arch === "llama" && headDimOf(c) % 2 !== 0)
      ctx.addIssue({
        code: "custom",
        path: ["headDim"],
        message: `RoPE needs an even head dimension, got ${headDimOf(c)}`,
      });
    const biggest = largestTensor(c);
    if (biggest.size > MAX_TENSOR_ELEMENTS) {
      const message =
        `the ${biggest.what} would hold ${biggest.size.toExponential(2)} float32 values; ` +
        `one tensor holds at most ${MAX_TENSOR_ELEMENTS} (2^31 - 1)`;
      ctx.addIssue({ code: "custom", path: biggest.path, message });
    }
  });

/** Transformer hyper-parameters (after defaults). */
export type TransformerConfig = z.output<typeof TransformerConfigSchema>;
/** Transformer hyper-parameters as written by a user (defaults optional). */
export type TransformerConfigInput = z.input<typeof TransformerConfigSchema>;

/** Validates a config, throwing a ConfigError that names each bad field (`hfNames`: our field → the file's name). */
export function parseTransformerConfig(
  input: unknown,
  source = "",
  hfNames: Record<string, string> = {},
): TransformerConfig {
  const r = TransformerConfigSchema.safeParse(input);
  if (!r.success) {
    const lines = r.error.issues.map((i) => {
      const field = i.path.join(".");
      const hf = Object.hasOwn(hfNames, field) ? ` (${hfNames[field]})` : "";
      return `  model.${field}${hf}: ${i.message}`;
    });
    throw new ConfigError(`${source ? `${source}: ` : ""}invalid transformer config:\n${lines.join("\n")}`);
  }
  return r.data;
}

/** The largest single weight of the config (embedding, position table or MLP matrix), for the tensor-size bound. */
function largestTensor(
  c: Pick<TransformerConfig, "arch" | "vocabSize" | "dModel" | "nHeads" | "headDim" | "dFf" | "maxSeqLen">,
): { size: number; what: string; path: string[] } {
  const options = [
    { size: c.vocabSize * c.dModel, what: "token embedding (vocabSize × dModel)", path: ["dModel"] },
    { size: c.dModel * c.dFf, what: "MLP matrix (dModel × dFf)", path: ["dFf"] },
    {
      size: c.nHeads * headDimOf(c) * c.dModel,
      what: "query projection (nHeads × headDim × dModel)",
      path: ["nHeads"],
    },
    {
      size: c.arch === "gpt2" ? c.maxSeqLen * c.dModel : 0,
      what: "position table (maxSeqLen × dModel)",
      path: ["maxSeqLen"],
    },
  ];
  return options.reduce((a, b) => (b.size > a.size ? b : a));
}

/** Number of float32 parameters of a model with this config (tied head counted once; LoRA adapters not included). */
export function parameterCount(c: TransformerConfig): number {
  const d = c.dModel,
    hd = headDimOf(c);
  const q = c.nHeads * hd,
    kv = c.nKvHeads * hd;
  const gpt = c.arch === "gpt2";
  const attn = d * (q + 2 * kv) + q * d + (gpt ? q + 2 * kv + d : c.qkvBias ? q + 2 * kv : 0);
  const mlp = gpt ? 2 * d * c.dFf + c.dFf + d : 3 * d * c.dFf;
  const norms = (gpt ? 4 : 2) * d; // two norms per block (weight, plus bias for LayerNorm)
  const perLayer = attn + mlp + norms;
  const embed = c.vocabSize * d + (gpt ? c.maxSeqLen * d : 0);
  const head = c.tieEmbeddings ? 0 : c.vocabSize * d;
  return embed + c.nLayers * perLayer + (gpt ? 2 * d : d) + head;
}

/** Per-head width: `headDim` when set, else dModel / nHeads. */
export function headDimOf(c: Pick<TransformerConfig, "headDim" | "dModel" | "nHeads">): number {
  return c.headDim ?? c.dModel / c.nHeads;
}

/** Writes a config with Hugging Face `config.json` field names (plus `rlvr_*` fields for what HF lacks). */
export function toHfConfig(
  c: TransformerConfig,
  extra: { eosId?: number; bosId?: number | null } = {},
): Record<string, unknown> {
  const qwen = c.arch === "llama" && c.qkvBias;
  const modelType = c.arch === "gpt2" ? "rlvr-gpt2" : qwen ? "qwen2" : "llama";
  const architectures =
    c.arch === "gpt2" ? ["RlvrGpt2ForCausalLM"] : qwen ? ["Qwen2ForCausalLM"] : ["LlamaForCausalLM"];
  return {
    architectures,
    model_type: modelType,
    vocab_size: c.vocabSize,
    hidden_size: c.dModel,
    intermediate_size: c.dFf,
    num_hidden_layers: c.nLayers,
    num_attention_heads: c.nHeads,
    num_key_value_heads: c.nKvHeads,
    head_dim: headDimOf(c),
    max_position_embeddings: c.maxSeqLen,
    rms_norm_eps: c.normEps,
    rope_theta: c.ropeTheta,
    tie_word_embeddings: c.tieEmbeddings,
    hidden_act: c.arch === "gpt2" ? "gelu_new" : "silu",
    attention_bias: c.arch === "llama" && !qwen ? false : undefined,
    eos_token_id: extra.eosId,
    bos_token_id: extra.bosId ?? undefined,
    torch_dtype: "float32",
    rlvr_dropout: c.dropout,
  };
}

/** Reads a Hugging Face config.json (Llama, Qwen2, Mistral-like, or our rlvr-gpt2) into a validated config. */
export function fromHfConfig(j: Record<string, unknown>, source = "config.json"): TransformerConfig {
  const type = String(j.model_type ?? "");
  const known = ["llama", "qwen2", "mistral", "rlvr-gpt2"];
  if (!known.includes(type)) {
    throw new ConfigError(`${source}: model_type "${type}" is not supported; expected one of ${known.join(", ")}`);
  }
  if (j.hidden_act !== undefined && j.hidden_act !== (type === "rlvr-gpt2" ? "gelu_new" : "silu")) {
    throw new ConfigError(`${source}: hidden_act "${String(j.hidden_act)}" is not supported for model_type ${type}`);
  }
  const rope = (j.rope_parameters ?? {}) as Record<string, unknown>; // transformers >= 5 nests rope_theta here
  const scaling = (j.rope_scaling ?? null) as Record<string, unknown> | null;
  const ropeType = rope.rope_type ?? scaling?.rope_type ?? scaling?.type ?? "default";
  if (ropeType !== "default")
    throw new ConfigError(`${source}: rope scaling "${String(ropeType)}" is not supported (only default RoPE)`);
  if (type !== "qwen2" && j.attention_bias === true)
    throw new ConfigError(`${source}: attention_bias (q/k/v/o biases) is not supported; Qwen2-style q/k/v biases are`);
  if (j.mlp_bias === true) throw new ConfigError(`${source}: mlp_bias is not supported`);
  if (j.use_sliding_window === true) throw new ConfigError(`${source}: sliding-window attention is not supported`);
  const nHeads = j.num_attention_heads as number;
  const hfNames = {
    vocabSize: "vocab_size",
    dModel: "hidden_size",
    nLayers: "num_hidden_layers",
    nHeads: "num_attention_heads",
    nKvHeads: "num_key_value_heads",
    headDim: "head_dim",
    dFf: "intermediate_size",
    maxSeqLen: "max_position_embeddings",
    ropeTheta: "rope_theta",
    normEps: "rms_norm_eps",
    tieEmbeddings: "tie_word_embeddings",
  };
  return parseTransformerConfig(
    {
      arch: type === "rlvr-gpt2" ? "gpt2" : "llama",
      vocabSize: j.vocab_size,
      dModel: j.hidden_size,
      nLayers: j.num_hidden_layers,
      nHeads,
      nKvHeads: j.num_key_value_heads ?? nHeads,
      headDim: j.head_dim !== undefined && j.head_dim !== (j.hidden_size as number) / nHeads ? j.head_dim : undefined, // only when it departs from the default
      dFf: j.intermediate_size,
      maxSeqLen: j.max_position_embeddings,
      ropeTheta: j.rope_theta ?? rope.rope_theta ?? 10000,
      normEps: j.rms_norm_eps ?? 1e-6,
      tieEmbeddings: j.tie_word_embeddings ?? false,
      qkvBias: type === "qwen2",
      dropout: j.rlvr_dropout ?? 0,
    },
    source,
    hfNames,
  );
}
