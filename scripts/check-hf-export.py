"""Loads folders written by `rlvr export --format safetensors-hf` with transformers and compares them with rlvr.

Run through `npm run check:hf-export` (scripts/check-hf-export.ts), which writes each folder and, beside it,
<folder>.expected.json with rlvr's prompt ids and logits. For each folder: AutoTokenizer gives rlvr's ids for
every prompt (rlvr adds bos itself when its tokenizer has one), and AutoModelForCausalLM's logits equal rlvr's
to 1e-4. Exits 1 on any mismatch.
"""
import json
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

TOL = 1e-4
failed = False
for d in sys.argv[1:]:
    exp = json.load(open(d + ".expected.json"))
    model = AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32)
    model.eval()
    tok = AutoTokenizer.from_pretrained(d)
    worst = 0.0
    for prompt, ids, logits in zip(exp["prompts"], exp["ids"], exp["logits"]):
        hf_ids = tok(prompt, add_special_tokens=False)["input_ids"]
        ours = ids[1:] if exp["bos"] is not None else ids
        if hf_ids != ours:
            print(f"FAIL {d}: {prompt!r}: transformers ids {hf_ids} != rlvr ids {ours}")
            failed = True
        with torch.no_grad():
            out = model(torch.tensor([ids])).logits[0]
        want = torch.tensor(logits).reshape(len(ids), exp["vocab"])
        worst = max(worst, (out - want).abs().max().item())
    status = "ok" if worst <= TOL else "FAIL"
    failed = failed or worst > TOL
    print(f"{status} {d.split('/')[-1]}: {type(model).__name__}, {tok.__class__.__name__}, max |logit diff| {worst:.2e}")
sys.exit(1 if failed else 0)
