"""
The vision-language parity fixture (test/fixtures/vision/), called by scripts/make-parity-fixture.py.

A PyTorch twin of src/models/vision-encoder.ts + src/models/vision-lm.ts with random weights, saved with rlvr's
checkpoint names (model.visual.*) beside a transformers LlamaForCausalLM decoder, the built-in char tokenizer
(rlvr-tokenizer.json) and config.json's vision fields. expected.safetensors holds:
  image.<i> (H, W, 3) input pixels in [0, 1]; resized.<i> (S, S, 3) = F.interpolate(bilinear, align_corners=False)
  input_ids (B, T) as float, targets (B, T) (-100 = ignored), logits (B, T, V) before the -1e9 on the vision ids,
  loss (1,), grad.<name> for encoder and decoder weights.
Row 0 holds one image, row 1 two (images 1 and 2), in prompt order.
"""
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file
from transformers import LlamaConfig, LlamaForCausalLM

TEXT_VOCAB = 99  # CharTokenizer: <pad> <bos> <eos>, printable ASCII, "\n"
START, END, PAD = TEXT_VOCAB, TEXT_VOCAB + 1, TEXT_VOCAB + 2
VISION = dict(imageSize=16, patchSize=4, mergeSize=2, dModel=32, nLayers=2, nHeads=4, dFf=64, normEps=1e-6)


def char_ids(text: str) -> list[int]:
    return [98 if c == "\n" else ord(c) - 32 + 3 for c in text]


def prompt_ids(text: str, per_image: int) -> list[int]:
    parts = text.split("<image>")
    out = [1]  # bos
    for i, part in enumerate(parts):
        if i > 0:
            out += [START] + [PAD] * per_image + [END]
        out += char_ids(part)
    return out


class Attention(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x):
        b, n, d = x.shape
        split = lambda y: y.view(b, n, self.heads, d // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x)))
        return self.o_proj(y.transpose(1, 2).reshape(b, n, d))


class Mlp(nn.Module):
    def __init__(self, d: int, ff: int):
        super().__init__()
        self.up_proj, self.down_proj = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x):
        return self.down_proj(F.gelu(self.up_proj(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, c: dict):
        super().__init__()
        d = c["dModel"]
        self.input_layernorm = nn.LayerNorm(d, eps=c["normEps"])
        self.self_attn = Attention(d, c["nHeads"])
        self.post_attention_layernorm = nn.LayerNorm(d, eps=c["normEps"])
        self.mlp = Mlp(d, c["dFf"])

    def forward(self, x):
        h = x + self.self_attn(self.input_layernorm(x))
        return h + self.mlp(self.post_attention_layernorm(h))


class Merger(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d_in, d_in), nn.Linear(d_in, d_out)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))


class VisionEncoder(nn.Module):
    def __init__(self, c: dict, d_out: int):
        super().__init__()
        self.c = c
        g = c["imageSize"] // c["patchSize"]
        self.patch_embed = nn.Conv2d(3, c["dModel"], c["patchSize"], stride=c["patchSize"])
        self.embed_positions = nn.Embedding(g * g, c["dModel"])
        self.layers = nn.ModuleList(Block(c) for _ in range(c["nLayers"]))
        self.norm = nn.LayerNorm(c["dModel"], eps=c["normEps"])
        m = c["mergeSize"]
        self.merger = Merger(m * m * c["dModel"], d_out)

    def resize(self, img):  # (H, W, 3) → (S, S, 3)
        s = self.c["imageSize"]
        x = img.permute(2, 0, 1)[None]
        return F.interpolate(x, size=(s, s), mode="bilinear", align_corners=False)[0].permute(1, 2, 0)

    def forward(self, images):
        c = self.c
        pix = torch.stack([(self.resize(im) - 0.5) / 0.5 for im in images]).permute(0, 3, 1, 2)  # (n, 3, S, S)
        x = self.patch_embed(pix).flatten(2).transpose(1, 2) + self.embed_positions.weight  # (n, N, dV), raster order
        for layer in self.layers:
            x = layer(x)
        x = self.norm(x)
        n, g, m, d = len(images), c["imageSize"] // c["patchSize"], c["mergeSize"], c["dModel"]
        h = g // m
        x = x.view(n, h, m, h, m, d).permute(0, 1, 3, 2, 4, 5).reshape(n * h * h, m * m * d)
        return self.merger(x)


def make_vision_fixture(out_dir: str, randomize) -> None:
    torch.manual_seed(5)
    os.makedirs(out_dir, exist_ok=True)
    cfg = LlamaConfig(
        vocab_size=TEXT_VOCAB + 3, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=128, rms_norm_eps=1e-5, rope_theta=10000.0, hidden_act="silu",
        tie_word_embeddings=True, bos_token_id=1, eos_token_id=2, pad_token_id=0, attn_implementation="eager",
    )
    decoder = LlamaForCausalLM(cfg)
    visual = VisionEncoder(VISION, 32)
    randomize(decoder, 11)
    randomize(visual, 12)
    g = torch.Generator().manual_seed(13)
    images = [torch.rand(12, 20, 3, generator=g), torch.rand(24, 16, 3, generator=g), torch.rand(16, 16, 3, generator=g)]
    per_image = (VISION["imageSize"] // VISION["patchSize"] // VISION["mergeSize"]) ** 2
    rows = [prompt_ids("Look: <image> red circle!", per_image), prompt_ids("<image>vs<image> same?", per_image)]
    t = max(len(r) for r in rows)
    rows = [r + char_ids("." * (t - len(r))) for r in rows]  # equal lengths, no padding mask needed
    input_ids = torch.tensor(rows)
    targets = torch.full_like(input_ids, -100)
    targets[:, :-1] = input_ids[:, 1:]
    targets[targets >= TEXT_VOCAB] = -100  # no loss on the vision ids
    targets[input_ids >= TEXT_VOCAB] = -100

    embeds = decoder.get_input_embeddings()(input_ids)  # (B, T, D)
    features = visual([images[0], images[1], images[2]])  # (3 · per_image, D), row 0's image then row 1's two
    mask = (input_ids == PAD)[..., None].expand_as(embeds)
    embeds = embeds.masked_scatter(mask, features)
    logits = decoder(inputs_embeds=embeds).logits  # (B, T, V)
    never = torch.zeros(TEXT_VOCAB + 3)
    never[TEXT_VOCAB:] = -1e9
    loss = F.cross_entropy((logits + never).reshape(-1, TEXT_VOCAB + 3), targets.reshape(-1), ignore_index=-100)
    loss.backward()

    weights = {k: v.detach().contiguous() for k, v in decoder.state_dict().items() if k != "lm_head.weight"}
    grads = {"grad." + k: p.grad.detach().contiguous() for k, p in decoder.named_parameters() if p.grad is not None}
    for k, p in visual.named_parameters():
        name = "model.visual." + k
        value, grad = p.detach(), p.grad.detach()
        if k == "patch_embed.weight":  # the Conv2d weight (d, 3, P, P) is rlvr's Linear weight (d, 3·P·P)
            value, grad = value.reshape(value.shape[0], -1), grad.reshape(grad.shape[0], -1)
        weights[name] = value.contiguous()
        grads["grad." + name] = grad.contiguous()
    save_file(weights, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
    hf = cfg.to_dict()
    config = {k: hf[k] for k in [
        "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
        "num_key_value_heads", "max_position_embeddings", "rms_norm_eps", "tie_word_embeddings",
        "hidden_act", "bos_token_id", "eos_token_id", "pad_token_id",
    ]}
    config.update(
        model_type="llama", architectures=["RlvrVisionLM"], head_dim=8, torch_dtype="float32", rope_theta=10000.0,
        rlvr_model_kind="vision-lm", rlvr_vision_config=VISION,
        rlvr_vision_token_ids=dict(start=START, end=END, pad=PAD),
    )
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    with open(os.path.join(out_dir, "rlvr-tokenizer.json"), "w") as f:
        f.write('{"type":"char","version":1}\n')
    keep = [
        "model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight", "model.layers.1.mlp.down_proj.weight",
        "model.visual.patch_embed.weight", "model.visual.patch_embed.bias", "model.visual.embed_positions.weight",
        "model.visual.layers.0.self_attn.q_proj.weight", "model.visual.layers.1.mlp.up_proj.bias",
        "model.visual.layers.0.input_layernorm.weight", "model.visual.norm.bias", "model.visual.merger.fc1.weight",
        "model.visual.merger.fc2.weight",
    ]
    expected = {
        "input_ids": input_ids.float(),
        "targets": targets.float(),
        "logits": logits.detach().contiguous(),
        "loss": loss.detach().reshape(1),
    }
    for i, im in enumerate(images):
        expected[f"image.{i}"] = im.contiguous()
        expected[f"resized.{i}"] = visual.resize(im).detach().contiguous()
    for k in keep:
        expected["grad." + k] = grads["grad." + k]
    save_file(expected, os.path.join(out_dir, "expected.safetensors"))
    print(out_dir, "loss", loss.item(), "T", t)
