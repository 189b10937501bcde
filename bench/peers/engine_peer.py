"""PyTorch eager side of `npm run bench:engine`, kept running as a child process (bench/harness/peer-process.ts):
bench/engine.ts asks it for one timed repetition at a time, in turns with its own (A B A B ...), so a neighbour or a
drift of the machine lands on both sides alike. Started as `engine_peer.py '{"threads": N}'`; JSON lines on stdin:

- {"id", "op": "info"}: torch's version, thread count, and each peer's BLAS and instruction set;
- {"id", "op": "build", "key", "kind", "settings"}: builds a repetition (model, inputs, optimizer) under `key`;
- {"id", "op": "time", "key"}: runs one repetition and answers its seconds.

Each answer is one line {"id", "value"} or {"id", "error"} on stdout. Started as `engine_peer.py '{"threads": N,
"rss": settings}'` it serves nothing: it builds a train repetition from the settings, runs 1 + settings["steps"]
steps, prints {"baseMb", "peakMb"} (resident memory after the imports, and the process's peak) and exits. The kinds measure exactly what bench/engine.ts
measures for rlvr, on CPU with torch.set_num_threads(threads):
- matmul: torch.mm of two (n, n) float32 matrices (a repetition is a burst of products lasting at least minTime;
  it answers seconds per product); numpy_matmul: the same with numpy.matmul (its own BLAS, usually OpenBLAS), a
  second GEMM peer, so the GEMM ratio is quoted against the faster of two BLAS builds;
- train: one full step (forward, mean cross-entropy, backward, AdamW step, zero_grad) of a pre-norm decoder built
  from plain torch modules with the same config as rlvr (GPT: learned positions, LayerNorm, tanh-GELU MLP, biases,
  tied head; Llama: RoPE, RMSNorm, SwiGLU, GQA, tied head);
- sample: a KV-cache decode loop under inference_mode (prompt forward, then one token at a time drawn with
  torch.multinomial from the softmax of the last logits);
- vision_encode, vision_rl_step: bench/engine-vision.ts's encoder and whole RL step.
The models use F.scaled_dot_product_attention with enable_gqa=True (no copy of the KV heads), the fastest eager
attention PyTorch offers on CPU, and RoPE cos/sin tables computed once per model, as production code does.
"""
import json
import os
import sys
import time

# numpy's BLAS threads must be set before numpy loads (torch may import it).
_THREADS = str(json.loads(sys.argv[1]).get("threads", 1)) if len(sys.argv) > 1 else "1"
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, _THREADS)

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def timed(fn):
    """A repetition: runs fn once and answers its seconds."""

    def rep():
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t

    return rep


def burst(fn, min_time):
    """A repetition of a quick call: calls fn until min_time has passed and answers the seconds per call."""

    def rep():
        start, n = time.perf_counter(), 0
        while n == 0 or time.perf_counter() - start < min_time:
            fn()
            n += 1
        return (time.perf_counter() - start) / n

    return rep


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(max_len, d, theta):
    # cos/sin (max_len, d), rotate-half convention (Hugging Face Llama); computed once per model
    inv = theta ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    ang = torch.outer(torch.arange(max_len, dtype=torch.float32), inv)
    return torch.cat([ang.cos(), ang.cos()], -1), torch.cat([ang.sin(), ang.sin()], -1)


def rope(x, cos, sin):
    # x (B, H, T, D); cos/sin (T, D) already sliced to x's positions
    d = x.shape[-1]
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

    def forward(self, x, cache=None, pos0=0, rope_cs=None):
        c = self.c
        b, t, _ = x.shape
        h, hkv, hd = c["nHeads"], c["nKvHeads"], c["dModel"] // c["nHeads"]
        y = self.n1(x)
        q = self.q(y).view(b, t, h, hd).transpose(1, 2)
        k = self.k(y).view(b, t, hkv, hd).transpose(1, 2)
        v = self.v(y).view(b, t, hkv, hd).transpose(1, 2)
        if c["arch"] == "llama":
            cos, sin = rope_cs[0][pos0 : pos0 + t], rope_cs[1][pos0 : pos0 + t]
            q, k = rope(q, cos, sin), rope(k, cos, sin)
        if cache is not None:
            kc, vc = cache
            kc[:, :, pos0 : pos0 + t] = k
            vc[:, :, pos0 : pos0 + t] = v
            k, v = kc[:, :, : pos0 + t], vc[:, :, : pos0 + t]
        causal = t > 1
        if cache is not None and pos0 > 0 and t > 1:
            raise ValueError("multi-token append to a non-empty cache is not used here")
        a = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hkv != h)
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
        hd = c["dModel"] // c["nHeads"]
        self.rope_cs = rope_tables(c["maxSeqLen"], hd, c.get("ropeTheta", 10000.0)) if c["arch"] == "llama" else None
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def forward(self, ids, caches=None, pos0=0, embeds=None):
        x = self.embed(ids) if embeds is None else embeds
        if self.pos is not None:
            x = x + self.pos(torch.arange(pos0, pos0 + ids.shape[1]))
        for i, blk in enumerate(self.blocks):
            x = blk(x, None if caches is None else caches[i], pos0, self.rope_cs)
        return self.norm(x) @ self.embed.weight.t()


def make_matmul(s):
    a, b = torch.randn(s["n"], s["n"]), torch.randn(s["n"], s["n"])
    return burst(lambda: torch.mm(a, b), s["minTime"])


def make_numpy_matmul(s):
    rng = np.random.default_rng(s["n"])
    a, b = (rng.standard_normal((s["n"], s["n"]), dtype=np.float32) for _ in range(2))
    return burst(lambda: np.matmul(a, b), s["minTime"])


def build_info():
    """Each peer's BLAS and instruction set, as the libraries report them."""
    cfg = torch.__config__.show()
    blas = next((l.split("=", 1)[1].strip().rstrip(",") for l in cfg.replace(", ", "\n").splitlines() if "BLAS_INFO=" in l), "?")
    try:
        isa = torch.backends.cpu.get_cpu_capability()
    except AttributeError:
        isa = "?"
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        np_blas = f'{deps.get("name", "?")} {deps.get("version", "")}'.strip()
    except Exception:  # older numpy: no dict mode
        np_blas = "?"
    coretype = "?"
    try:
        from threadpoolctl import threadpool_info

        for pool in threadpool_info():
            if pool.get("internal_api") == "openblas":
                coretype = pool.get("architecture") or "?"
    except ImportError:
        pass
    return {
        "torch_blas": blas, "torch_isa": isa, "torch_mkldnn": bool(torch.backends.mkldnn.is_available()),
        "numpy": np.__version__, "numpy_blas": np_blas, "numpy_openblas_coretype": coretype,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
    }


def make_train(s):
    c, batch, seq = s["config"], s["batch"], s["seq"]
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

    return timed(step)


def make_sample(s):
    c, batch, prompt_len, new_tokens = s["config"], s["batch"], s["promptLen"], s["newTokens"]
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

    return timed(run)


def make_vision(s, part):
    """The encoder (no grad) or a full RL step (KV-cache sampling, then one advantage-weighted update through
    decoder and encoder) of bench/engine-vision.ts's vision-language shape."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
    from vision_fixture import VisionEncoder  # the torch twin of src/models/vision-encoder.ts (parity-tested)

    torch.manual_seed(0)
    c, v, ids = s["decoder"], s["vision"], s["ids"]
    decoder, visual = Decoder(c), VisionEncoder(v, c["dModel"])
    never = torch.zeros(c["vocabSize"])
    never[[ids["start"], ids["end"], ids["pad"]]] = -1e9
    size = v["imageSize"]
    gen = torch.Generator().manual_seed(0)
    enc_images = [torch.rand(size, size, 3, generator=gen) for _ in range(s["encodeBatch"])]
    visual.eval()

    def encode():
        with torch.inference_mode():
            visual(enc_images)

    if part == "encode":
        return timed(encode)

    rows, new, per_image = s["rows"], s["newTokens"], (size // v["patchSize"] // v["mergeSize"]) ** 2
    images = [torch.rand(size, size, 3, generator=gen) for _ in range(rows)]
    text = torch.randint(3, ids["start"], (rows, s["promptText"]), generator=gen)
    image_ids = torch.tensor([ids["start"]] + [ids["pad"]] * per_image + [ids["end"]]).expand(rows, -1)
    prompt = torch.cat([image_ids, text], 1)
    plen, hd = prompt.shape[1], c["dModel"] // c["nHeads"]
    params = list(decoder.parameters()) + list(visual.parameters())
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.0)
    adv = torch.randn(rows, generator=gen)

    def embed(tokens):
        x = decoder.embed(tokens)
        mask = (tokens == ids["pad"])[..., None].expand_as(x)
        return x.masked_scatter(mask, visual(images))

    def step():
        decoder.eval(), visual.eval()
        with torch.inference_mode():
            caches = [(torch.zeros(rows, c["nKvHeads"], plen + new, hd), torch.zeros(rows, c["nKvHeads"], plen + new, hd)) for _ in range(c["nLayers"])]
            logits = decoder(prompt, caches, 0, embed(prompt))[:, -1] + never
            toks, pos = [], plen
            for i in range(new):
                tok = torch.multinomial(torch.softmax(logits, -1), 1, generator=gen)
                toks.append(tok)
                if i < new - 1:
                    logits = decoder(tok, caches, pos)[:, -1] + never
                    pos += 1
        decoder.train(), visual.train()
        full = torch.cat([prompt] + toks, 1)
        logits = decoder(full, None, 0, embed(full)) + never  # (rows, plen + new, V), as rlvr's update forward
        targets = torch.cat([full[:, 1:], torch.full((rows, 1), -100)], 1)
        targets[:, : plen - 1] = -100
        nll = F.cross_entropy(logits.reshape(-1, c["vocabSize"]), targets.reshape(-1), ignore_index=-100, reduction="none")
        (nll.view(rows, -1).sum(1) * adv / (rows * new)).sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return timed(step)


KINDS = {
    "matmul": make_matmul,
    "numpy_matmul": make_numpy_matmul,
    "train": make_train,
    "sample": make_sample,
    "vision_encode": lambda s: make_vision(s, "encode"),
    "vision_rl_step": lambda s: make_vision(s, "rl_step"),
}


def answer(req, reps):
    op = req.get("op")
    if op == "info":
        return {"torch": torch.__version__, "threads": torch.get_num_threads(), **build_info()}
    if op == "build":
        reps[req["key"]] = KINDS[req["kind"]](req["settings"])
        return True
    if op == "time":
        return reps[req["key"]]()
    raise ValueError(f"unknown op {op!r}")


def rss(settings):
    """The peak resident memory (MB) of this process training one shape, and its memory before the model."""
    import resource

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux; the peak so far, imports only
    rep = make_train(settings)
    for _ in range(1 + settings["steps"]):
        rep()
    print(json.dumps({"baseMb": base, "peakMb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), flush=True)


def main():
    torch.set_num_threads(int(_THREADS))
    if len(sys.argv) > 1 and "rss" in json.loads(sys.argv[1]):
        return rss(json.loads(sys.argv[1])["rss"])
    reps = {}
    for line in sys.stdin:
        req = json.loads(line)
        try:
            msg = {"id": req["id"], "value": answer(req, reps)}
        except Exception as e:  # the bench reports it and goes on without this figure's peer
            msg = {"id": req["id"], "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(msg), flush=True)


if __name__ == "__main__":
    main()
