#!/usr/bin/env python3
"""
Builds the GPT-2 parity fixture in test/fixtures/parity/gpt2/ (run once; the outputs are committed).

rlvr's `gpt2` architecture (the one bench:learn and the demo train) keeps its tensors in its own layout under
`model_type: "rlvr-gpt2"` (separate q/k/v projections stored as (out, in), Llama-style names). This script builds
a Hugging Face `GPT2LMHeadModel` with random weights, rewrites its weights into rlvr's layout (Conv1D weights are
(in, out), so they are transposed, and the fused `c_attn` is split into q, k and v), and records transformers'
own logits, loss and gradients for a fixed batch, with the gradients rewritten into rlvr's layout the same way.
The tokenizer is the committed byte-level BPE of the llama fixture.

Usage: python scripts/make-gpt2-parity-fixture.py   (a venv with torch, transformers, safetensors, tokenizers)
"""
import json
import os

import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from tokenizers import Tokenizer
from transformers import GPT2Config, GPT2LMHeadModel

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "parity")
OUT = os.path.join(ROOT, "gpt2")
VOCAB, D, LAYERS, HEADS, FF, POS = 300, 64, 2, 4, 128, 32
EPS = 1e-5


def randomize(model: torch.nn.Module, seed: int) -> None:
    # Spread enough that every path (norm weights, biases, positions) matters in the logits.
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".ln_" in name or name.startswith("transformer.ln_f"):
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith(".bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.08 * torch.randn(p.shape, generator=g))


def to_rlvr(t: dict) -> dict:
    """HF GPT-2 tensors (weights or their gradients) -> rlvr-gpt2 names and layout."""
    out = {
        "model.embed_tokens.weight": t["transformer.wte.weight"],
        "model.embed_positions.weight": t["transformer.wpe.weight"],
        "model.norm.weight": t["transformer.ln_f.weight"],
        "model.norm.bias": t["transformer.ln_f.bias"],
    }
    for i in range(LAYERS):
        h, m = f"transformer.h.{i}.", f"model.layers.{i}."
        out[m + "input_layernorm.weight"] = t[h + "ln_1.weight"]
        out[m + "input_layernorm.bias"] = t[h + "ln_1.bias"]
        w, b = t[h + "attn.c_attn.weight"], t[h + "attn.c_attn.bias"]  # Conv1D: (in, 3d), (3d,)
        for j, name in enumerate(["q_proj", "k_proj", "v_proj"]):
            out[m + f"self_attn.{name}.weight"] = w[:, j * D:(j + 1) * D].T
            out[m + f"self_attn.{name}.bias"] = b[j * D:(j + 1) * D]
        out[m + "self_attn.o_proj.weight"] = t[h + "attn.c_proj.weight"].T
        out[m + "self_attn.o_proj.bias"] = t[h + "attn.c_proj.bias"]
        out[m + "post_attention_layernorm.weight"] = t[h + "ln_2.weight"]
        out[m + "post_attention_layernorm.bias"] = t[h + "ln_2.bias"]
        out[m + "mlp.up_proj.weight"] = t[h + "mlp.c_fc.weight"].T
        out[m + "mlp.up_proj.bias"] = t[h + "mlp.c_fc.bias"]
        out[m + "mlp.down_proj.weight"] = t[h + "mlp.c_proj.weight"].T
        out[m + "mlp.down_proj.bias"] = t[h + "mlp.c_proj.bias"]
    return {k: v.detach().contiguous().float() for k, v in out.items()}


def main() -> None:
    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    tok = Tokenizer.from_file(os.path.join(ROOT, "llama", "tokenizer.json"))
    cfg = GPT2Config(
        vocab_size=VOCAB, n_embd=D, n_layer=LAYERS, n_head=HEADS, n_inner=FF, n_positions=POS,
        activation_function="gelu_new", layer_norm_epsilon=EPS, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        tie_word_embeddings=True, attn_implementation="eager",
    )
    model = GPT2LMHeadModel(cfg)
    randomize(model, 3)
    model.eval()
    hf = dict(model.named_parameters())
    save_file(to_rlvr(hf), os.path.join(OUT, "model.safetensors"), metadata={"format": "pt"})
    tok.save(os.path.join(OUT, "tokenizer.json"))
    config = {
        "architectures": ["RlvrGpt2ForCausalLM"], "model_type": "rlvr-gpt2", "vocab_size": VOCAB, "hidden_size": D,
        "intermediate_size": FF, "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
        "num_key_value_heads": HEADS, "head_dim": D // HEADS, "max_position_embeddings": POS, "rms_norm_eps": EPS,
        "tie_word_embeddings": True, "hidden_act": "gelu_new", "eos_token_id": VOCAB - 3, "pad_token_id": VOCAB - 3,
        "torch_dtype": "float32", "rlvr_dropout": 0,
    }
    with open(os.path.join(OUT, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")

    texts = ["12+345=357\n40+2=42", "Hello, world! The quick brown fox"]
    ids = [tok.encode(t).ids for t in texts]
    t = min(min(len(x) for x in ids), 12)
    input_ids = torch.tensor([x[:t] for x in ids], dtype=torch.long)  # (B, T)
    targets = torch.full_like(input_ids, -100)
    targets[:, :-1] = input_ids[:, 1:]
    targets[0, :3] = -100  # a "prompt" span whose loss is ignored
    model.zero_grad()
    logits = model(input_ids=input_ids).logits  # (B, T, V)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1), ignore_index=-100)
    loss.backward()
    grads = to_rlvr({n: p.grad for n, p in hf.items()})
    keep = [
        "model.embed_positions.weight", "model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.v_proj.bias",
        "model.layers.1.mlp.up_proj.weight", "model.layers.1.input_layernorm.bias", "model.norm.weight",
    ]
    out = {
        "input_ids": input_ids.float().contiguous(), "targets": targets.float().contiguous(),
        "logits": logits.detach().contiguous(), "loss": loss.detach().reshape(1),
    }
    for n in keep:
        out["grad." + n] = grads[n]
    save_file(out, os.path.join(OUT, "expected.safetensors"))
    print(OUT, "loss", loss.item(), "T", t)


if __name__ == "__main__":
    main()
