"""PyTorch eager side of `npm run bench:engine` (bench/engine.ts passes the settings as one JSON argument and reads
one JSON object per metric from stdout).

It measures exactly what bench/engine.ts measures for rlvr, with the same methodology (warm-up, then the median of
timed repetitions), on CPU with torch.set_num_threads(threads):
- matmul: torch.mm of two (n, n) float32 matrices, GFLOP/s;
- train: one full step (forward, mean cross-entropy, backward, AdamW step, zero_grad) of a pre-norm decoder built
  from plain torch modules with the same config as rlvr (GPT: learned positions, LayerNorm, tanh-GELU MLP, biases,
  tied head; Llama: RoPE, RMSNorm, SwiGLU, GQA, tied head), tokens/s;
- sample: a KV-cache decode loop under inference_mode (prompt forward, then one token at a time drawn with
  torch.multinomial from the softmax of the last logits), new tokens/s.
The models use F.scaled_dot_product_attention, the fastest eager attention PyTorch offers on CPU.
"""
import json
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def median_time(fn, warmup, reps, min_time=0.0):
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < reps or (time.perf_counter() - start) < min_time:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, pos0, theta):
    # x (B, H, T, D), rotate-half convention (Hugging Face Llama)
    d = x.shape[-1]
    inv = theta ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    t = torch.arange(pos0, pos0 + x.shape[2], dtype=torch.float32)
    ang = torch.outer(t, inv)
    cos, sin = torch.cat([ang.cos(), ang.cos()], -1), torch.cat([ang.sin(), ang.sin()], -1)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return x * cos + torch.cat([-x2, x1], -1) * sin


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        d, hd = c["dModel"], c["dModel"] // c["nHeads"]
        gpt = c["arch"] == "gpt2"
        norm = (lambda: nn.LayerNorm(d, eps=c["normEps"])) if gpt else (lambda: RMSNorm(d, c["normEps"]))
        self.n1, self.n2 = norm(), norm()
        self.q = nn.Linear(d, c["nHeads"] * hd, bias=gpt)
        self.k = nn.Linear(d, c["nKvHeads"] * hd, bias=gpt)
        self.v = nn.Linear(d, c["nKvHeads"] * hd, bias=gpt)
        self.o = nn.Linear(c["nHeads"] * hd, d, bias=gpt)
        self.gate = None if gpt else nn.Linear(d, c["dFf"], bias=False)
        self.up = nn.Linear(d, c["dFf"], bias=gpt)
        self.down = nn.Linear(c["dFf"], d, bias=gpt)

    def forward(self, x, cache=None, pos0=0):
        c = self.c
        b, t, _ = x.shape
        h, hkv, hd = c["nHeads"], c["nKvHeads"], c["dModel"] // c["nHeads"]
        y = self.n1(x)
        q = self.q(y).view(b, t, h, hd).transpose(1, 2)
        k = self.k(y).view(b, t, hkv, hd).transpose(1, 2)
        v = self.v(y).view(b, t, hkv, hd).transpose(1, 2)
        if c["arch"] == "llama":
            q, k = rope(q, pos0, c["ropeTheta"]), rope(k, pos0, c["ropeTheta"])
        if cache is not None:
            kc, vc = cache
            kc[:, :, pos0 : pos0 + t] = k
            vc[:, :, pos0 : pos0 + t] = v
            k, v = kc[:, :, : pos0 + t], vc[:, :, : pos0 + t]
        if hkv != h:
            k = k.repeat_interleave(h // hkv, dim=1)
            v = v.repeat_interleave(h // hkv, dim=1)
        causal = t > 1
        if cache is not None and pos0 > 0 and t > 1:
            raise ValueError("multi-token append to a non-empty cache is not used here")
        a = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, h * hd))
        y = self.n2(x)
        m = F.gelu(self.up(y), approximate="tanh") if self.gate is None else F.silu(self.gate(y)) * self.up(y)
        return x + self.down(m)


class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c["vocabSize"], c["dModel"])
        self.pos = nn.Embedding(c["maxSeqLen"], c["dModel"]) if c["arch"] == "gpt2" else None
        self.blocks = nn.ModuleList([Block(c) for _ in range(c["nLayers"])])
        self.norm = nn.LayerNorm(c["dModel"], eps=c["normEps"]) if c["arch"] == "gpt2" else RMSNorm(c["dModel"], c["normEps"])
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def forward(self, ids, caches=None, pos0=0):
        x = self.embed(ids)
        if self.pos is not None:
            x = x + self.pos(torch.arange(pos0, pos0 + ids.shape[1]))
        for i, blk in enumerate(self.blocks):
            x = blk(x, None if caches is None else caches[i], pos0)
        return self.norm(x) @ self.embed.weight.t()


def bench_matmul(n):
    a, b = torch.randn(n, n), torch.randn(n, n)
    t = median_time(lambda: torch.mm(a, b), 3, 10, 1.0)
    return 2 * n ** 3 / t / 1e9


def bench_train(c, batch, seq, warmup, steps):
    torch.manual_seed(0)
    model = Decoder(c)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    ids = torch.randint(0, c["vocabSize"], (batch, seq + 1))
    x, y = ids[:, :-1], ids[:, 1:]

    def step():
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, c["vocabSize"]), y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    t = median_time(step, warmup, steps)
    return batch * seq / t


def bench_sample(c, batch, prompt_len, new_tokens, reps):
    torch.manual_seed(0)
    model = Decoder(c).eval()
    hd = c["dModel"] // c["nHeads"]
    prompt = torch.randint(0, c["vocabSize"], (batch, prompt_len))
    gen = torch.Generator().manual_seed(0)

    def run():
        with torch.inference_mode():
            total = prompt_len + new_tokens
            caches = [(torch.zeros(batch, c["nKvHeads"], total, hd), torch.zeros(batch, c["nKvHeads"], total, hd)) for _ in range(c["nLayers"])]
            logits = model(prompt, caches, 0)[:, -1]
            pos = prompt_len
            for _ in range(new_tokens):
                tok = torch.multinomial(torch.softmax(logits, -1), 1, generator=gen)
                logits = model(tok, caches, pos)[:, -1]
                pos += 1

    t = median_time(run, 1, reps)
    return batch * new_tokens / t


def main():
    s = json.loads(sys.argv[1])
    torch.set_num_threads(s["threads"])
    out = {"torch": torch.__version__, "threads": torch.get_num_threads()}
    for n in s.get("matmul", []):
        out[f"matmul.{n}.gflops"] = bench_matmul(n)
    for name, t in s.get("train", {}).items():
        out[f"train.{name}.tokens_per_s"] = bench_train(t["config"], t["batch"], t["seq"], t["warmup"], t["steps"])
    if "sample" in s:
        p = s["sample"]
        out["sample.tokens_per_s"] = bench_sample(p["config"], p["batch"], p["promptLen"], p["newTokens"], p["reps"])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
