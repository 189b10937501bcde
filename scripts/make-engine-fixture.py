"""Writes test/fixtures/engine-ops.json: PyTorch reference values and gradients for engine ops and optimiser steps.

Run from the repository root with the dev venv: .venv/bin/python scripts/make-engine-fixture.py
Each case stores its inputs, a fixed upstream weight w (the loss is sum(w * op(inputs))), the output and the
gradient of every input. The TypeScript test (test/engine/torch-parity.test.ts) replays them without Python.
"""
import json
import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)  # references in float64; the engine runs float32


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def case(name, fn, inputs, extra=None):
    leaves = [x.clone().requires_grad_(True) for x in inputs]
    out = fn(*leaves)
    w = torch.randn(out.shape)
    (out * w).sum().backward()
    return {
        "name": name,
        "inputs": [{"shape": list(x.shape), "data": flat(x)} for x in inputs],
        "w": flat(w),
        "out": {"shape": list(out.shape), "data": flat(out)},
        "grads": [flat(x.grad) for x in leaves],
        **(extra or {}),
    }


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rope(x, pos_offset, theta):
    # Hugging Face LlamaRotaryEmbedding + apply_rotary_pos_emb
    d = x.shape[-1]
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    pos = torch.arange(pos_offset, pos_offset + x.shape[2], dtype=torch.float64)
    freqs = torch.outer(pos, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos() + rotate_half(x) * emb.sin()


def rms_norm(x, w, eps):
    # Hugging Face LlamaRMSNorm
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def attention(q, k, v, mask):
    # GQA by repeating KV heads (HF repeat_kv); causal over the last Tq positions; mask (B, Tk) 1 = keep
    rep = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(rep, dim=1)
    v = v.repeat_interleave(rep, dim=1)
    tq, tk = q.shape[2], k.shape[2]
    causal = torch.ones(tq, tk, dtype=torch.bool).tril(diagonal=tk - tq)
    keep = causal[None, None] & (mask[:, None, None, :] > 0)
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    return torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1) @ v


cases = []
x = torch.randn(3, 7)
cases.append(case("gelu", lambda t: F.gelu(t, approximate="tanh"), [x]))
cases.append(case("silu", F.silu, [x]))
cases.append(case("logSoftmax", lambda t: F.log_softmax(t, dim=-1), [x]))
cases.append(case("layerNorm", lambda t, w, b: F.layer_norm(t, (7,), w, b, 1e-5), [x, torch.randn(7), torch.randn(7)]))
cases.append(case("rmsNorm", lambda t, w: rms_norm(t, w, 1e-6), [x, torch.randn(7)]))
targets = [2, -100, 6]
cases.append(case("crossEntropy", lambda t: F.cross_entropy(t, torch.tensor(targets), ignore_index=-100).reshape(1), [x], {"targets": targets}))
cases.append(case("rope", lambda t: rope(t, 5, 10000.0), [torch.randn(2, 3, 4, 8)], {"posOffset": 5, "theta": 10000}))
mask = torch.tensor([[1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1]], dtype=torch.float64)
cases.append(case("attention", lambda q, k, v: attention(q, k, v, mask), [torch.randn(2, 4, 3, 8), torch.randn(2, 2, 6, 8), torch.randn(2, 2, 6, 8)], {"mask": flat(mask)}))

# Optimisers: three steps from fixed parameters and gradients.
p0 = torch.randn(5)
grads = [torch.randn(5) for _ in range(3)]


def run(opt_factory):
    p = p0.clone().requires_grad_(True)
    opt = opt_factory([p])
    for g in grads:
        p.grad = g.clone()
        opt.step()
    return flat(p)


optim = {
    "p0": flat(p0),
    "grads": [flat(g) for g in grads],
    "adamw": run(lambda ps: torch.optim.AdamW(ps, lr=0.01, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)),
    "sgdMomentum": run(lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01)),
}
g = torch.randn(4, 3) * 3
gc = g.clone().requires_grad_(False)
p = torch.zeros(4, 3, requires_grad=True)
p.grad = gc
norm = torch.nn.utils.clip_grad_norm_([p], 1.0)
optim["clip"] = {"grad": flat(g), "norm": float(norm), "clipped": flat(p.grad)}

with open("test/fixtures/engine-ops.json", "w") as f:
    json.dump({"generator": "scripts/make-engine-fixture.py", "torch": torch.__version__, "cases": cases, "optim": optim}, f)
print(f"wrote {len(cases)} op cases and optimiser references")
