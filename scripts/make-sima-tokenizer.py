"""Trains the byte-level BPE tokenizer of bench:sima's policy (docs/multi-turn.md, "SIMA 2") and writes it to
assets/tokenizers/sima-bpe/ (tokenizer.json and tokenizer_config.json), where recipes/sima.yaml and bench/sima read it,
with reference encodings in test/fixtures/sima-bpe-ids.json.

The corpus is bench:sima's SFT mix (scripts/sima-corpus.ts): the world's solver trajectories of the four SFT kinds
and the arithmetic golds. Digits stay single tokens (arithmetic is done digit by digit, as with the char tokenizer);
everything else is byte-level BPE, so any text encodes and decodes exactly. Deterministic for a given corpus.

Run (a venv with `tokenizers` from the local wheel index, see the developers' guide):
  python scripts/make-sima-tokenizer.py
"""
import json
import os
import subprocess
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "assets", "tokenizers", "sima-bpe")
VOCAB = int(os.environ.get("SIMA_BPE_VOCAB", "512"))
SPECIALS = ["<pad>", "<bos>", "<eos>"]


def corpus():
    out = subprocess.run(
        ["npx", "tsx", "scripts/sima-corpus.ts"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line]


def main():
    texts = corpus()
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    for t in texts[:200]:
        assert tok.decode(tok.encode(t).ids) == t, t
    os.makedirs(OUT, exist_ok=True)
    tok.save(os.path.join(OUT, "tokenizer.json"))
    config = {"eos_token": "<eos>", "pad_token": "<pad>", "bos_token": "<bos>"}
    with open(os.path.join(OUT, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=1)
        f.write("\n")
    # Reference ids for test/models/sima-tokenizer.test.ts: the JS library must encode as the Python crate does.
    probes = [
        "task: go to the red room\n@purple hold:none\nsee: nothing\nexits: west white open\n> ",
        "put green key in green box\n",
        "Sam has 15 cups, loses 4, gets 1. Now?\\boxed{12}",
        "invalid: no door south\n@purple hold:red key\nsee: yellow box(open: red key)\n",
        "answer 3\n",
        "h\u00e9llo ~ weird\t\u0001",
    ]
    with open(os.path.join(ROOT, "test", "fixtures", "sima-bpe-ids.json"), "w") as f:
        json.dump([{"text": p, "ids": tok.encode(p).ids} for p in probes], f)
        f.write("\n")
    lengths = [len(tok.encode(t).ids) / len(t) for t in texts]
    print(f"vocab {tok.get_vocab_size()}, tokens per character {sum(lengths) / len(lengths):.3f}", file=sys.stderr)


main()
