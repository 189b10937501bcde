#!/usr/bin/env python3
"""
Builds the PyTorch parity fixtures in test/fixtures/parity/ (run once; the outputs are committed).

Two tiny checkpoints with random weights, saved by `transformers` exactly as a Hub checkpoint would be:
  llama/  LlamaForCausalLM, 2 layers, GQA (4 heads, 2 kv heads), untied head, float32 safetensors
  qwen2/  Qwen2ForCausalLM, q/k/v biases, tied embeddings (no lm_head tensor saved), bfloat16 safetensors
Both share a small byte-level BPE tokenizer.json trained here with the `tokenizers` library.

For a fixed batch of token ids each directory gets `expected.safetensors` with:
  input_ids (B, T) as float, targets (B, T) as float (-100 = ignored), logits (B, T, V),
  loss (1,) = mean cross-entropy over non-ignored targets, and grad.<param name> for a few parameters.
tokenizer-cases.json holds strings and the ids the Python tokenizer gives them.
dtypes.safetensors holds the same values stored as F32, F16 and BF16 (and dtypes.json their float32 values after
rounding to each dtype), to test reading every dtype we support.

vision/ (test/fixtures/vision/) holds a tiny vision-language model: transformers' LlamaForCausalLM as the decoder and
a hand-written PyTorch twin of src/models/vision-encoder.ts (its patch embedding a real stride-P Conv2d, its blocks
torch's LayerNorm, scaled_dot_product_attention and tanh GELU), its image tokens put in place of the image pads with
masked_scatter as Qwen2-VL does; expected.safetensors has the images, their bilinear resizes (F.interpolate), the
logits, the loss and gradients of encoder and decoder weights (scripts/vision_fixture.py).

Usage: .venv/bin/python scripts/make-parity-fixture.py [--only vision]
"""
import sys
import copy
import json
import os

import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "parity")
VOCAB = 300
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "12+345=357\n40+2=42\n999+1=1000",
    "Question: what is 7 times 6? Answer: 42",
    "def add(a, b):\n    return a + b\n",
    "Hello, world! Hello again, world.",
    "Reinforcement learning with verifiable rewards trains the policy on checked answers.",
] * 20

TOKENIZER_CASES = [
    "Hello, world!",
    "12+345=357",
    "  leading spaces and trailing  ",
    "line one\nline two\n\n",
    "unicode: caf\u00e9 \u00fcber \u4f60\u597d \U0001f600",
    "The answer is <|im_end|> done",
    "",
]


def build_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB - len(SPECIALS),
        special_tokens=[],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer=trainer)
    tok.add_special_tokens(SPECIALS)
    assert tok.get_vocab_size() == VOCAB, tok.get_vocab_size()
    return tok


def common_config() -> dict:
    return dict(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        hidden_act="silu",
        bos_token_id=None,
        eos_token_id=VOCAB - 3,  # <|endoftext|>
        pad_token_id=VOCAB - 3,
        attn_implementation="eager",
    )


def randomize(model: torch.nn.Module, seed: int) -> None:
    # Random weights with enough spread that every path (norm weights, biases) matters in the logits.
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or "layernorm" in name:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith(".bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.08 * torch.randn(p.shape, generator=g))


def record(model: torch.nn.Module, tok: Tokenizer, out_dir: str, grad_names: list[str]) -> None:
    texts = ["12+345=357\n40+2=42", "Hello, world! The quick brown fox"]
    ids = [tok.encode(t).ids for t in texts]
    t = min(len(x) for x in ids)
    t = min(t, 12)
    input_ids = torch.tensor([x[:t] for x in ids], dtype=torch.long)  # (B, T)
    targets = torch.full_like(input_ids, -100)
    targets[:, :-1] = input_ids[:, 1:]
    targets[0, :3] = -100  # a "prompt" span whose loss is ignored
    model.zero_grad()
    logits = model(input_ids=input_ids).logits  # (B, T, V)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1), ignore_index=-100)
    loss.backward()
    params = dict(model.named_parameters())
    out = {
        "input_ids": input_ids.float().contiguous(),
        "targets": targets.float().contiguous(),
        "logits": logits.detach().contiguous(),
        "loss": loss.detach().reshape(1),
    }
    for n in grad_names:
        out["grad." + n] = params[n].grad.detach().contiguous()
    save_file(out, os.path.join(out_dir, "expected.safetensors"))
    print(out_dir, "loss", loss.item(), "T", t)


def dtype_fixture() -> None:
    values = torch.tensor([[0.0, -1.5, 3.140625, 1e-6], [65504.0, -2.0**-20, 100.25, 7.0]])
    tensors = {"f32": values, "f16": values.half(), "bf16": values.bfloat16()}
    save_file(tensors, os.path.join(ROOT, "dtypes.safetensors"), metadata={"made_by": "make-parity-fixture.py"})
    expected = {k: v.float().flatten().tolist() for k, v in tensors.items()}
    with open(os.path.join(ROOT, "dtypes.json"), "w") as f:
        json.dump(expected, f)


def main() -> None:
    torch.manual_seed(0)
    os.makedirs(ROOT, exist_ok=True)
    tok = build_tokenizer()
    dtype_fixture()

    cases = [{"text": s, "ids": tok.encode(s).ids} for s in TOKENIZER_CASES]
    with open(os.path.join(ROOT, "tokenizer-cases.json"), "w") as f:
        json.dump(cases, f, indent=1, ensure_ascii=False)

    llama_dir = os.path.join(ROOT, "llama")
    llama = LlamaForCausalLM(LlamaConfig(**common_config(), tie_word_embeddings=False))
    randomize(llama, 1)
    llama.save_pretrained(llama_dir, safe_serialization=True)
    tok.save(os.path.join(llama_dir, "tokenizer.json"))
    record(llama, tok, llama_dir, [
        "model.layers.0.self_attn.q_proj.weight",
        "model.layers.0.self_attn.k_proj.weight",
        "model.layers.1.mlp.down_proj.weight",
        "model.layers.1.input_layernorm.weight",
        "model.norm.weight",
    ])

    qwen_dir = os.path.join(ROOT, "qwen2")
    qwen = Qwen2ForCausalLM(Qwen2Config(**common_config(), tie_word_embeddings=True))
    randomize(qwen, 2)
    # Round the weights to bf16 values and save a bf16 copy; compute in float32 with those exact values. (Casting
    # the model itself to bf16 and back would also round RoPE's inv_freq buffer and skew the reference.)
    with torch.no_grad():
        for p in qwen.parameters():
            p.copy_(p.bfloat16().float())
    copy.deepcopy(qwen).to(torch.bfloat16).save_pretrained(qwen_dir, safe_serialization=True)
    tok.save(os.path.join(qwen_dir, "tokenizer.json"))
    record(qwen, tok, qwen_dir, [
        "model.layers.0.self_attn.q_proj.bias",
        "model.layers.0.self_attn.v_proj.weight",
        "model.layers.1.mlp.gate_proj.weight",
        "model.layers.1.post_attention_layernorm.weight",
    ])

    from vision_fixture import make_vision_fixture

    make_vision_fixture(os.path.join(ROOT, "..", "vision"), randomize)


if __name__ == "__main__":
    if sys.argv[1:] == ["--only", "vision"]:
        from vision_fixture import make_vision_fixture

        make_vision_fixture(os.path.join(ROOT, "..", "vision"), randomize)
    else:
        main()
