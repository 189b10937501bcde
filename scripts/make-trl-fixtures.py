"""Writes test/fixtures/trl/grpo.json: advantages, loss and d loss / d logp computed by TRL's own GRPOTrainer code.

Usage (a venv with torch, transformers and trl from the local wheel index):
    python3 -m venv /tmp/trlvenv
    /tmp/trlvenv/bin/pip install --index-url file:///opt/pypi/simple --find-links /opt/wheels torch trl transformers
    /tmp/trlvenv/bin/python scripts/make-trl-fixtures.py

Nothing here re-implements TRL's formulas. For each configuration a real `GRPOTrainer` is built from a real
`GRPOConfig` (so `__init__` resolves epsilon_high, warns about GSPO with token-sum losses, and so on) around the tiny
Llama fixture, then:
- advantages come from `trainer._generate_and_score_completions`, with `_generate` stubbed to return fixed token ids
  (and a tool mask) and a reward function that returns fixed rewards (None = unscorable);
- the loss comes from `trainer._compute_loss`, with `_get_per_token_logps_and_entropies` stubbed to return a fixed
  leaf tensor of per-token log-probs; `loss.backward()` gives d loss / d logp.
Everything runs in float64 (torch default dtype); the rewards are exact in float32, which TRL casts them through.
test/algorithms/trl-parity.test.ts replays every configuration through rlvr's computeAdvantages + policyLoss.
"""
import json
import logging
import os
import random
import sys
from importlib.metadata import version

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast
from trl import GRPOConfig, GRPOTrainer

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
MODEL = os.path.join(ROOT, "test", "fixtures", "parity", "llama")
OUT = os.path.join(ROOT, "test", "fixtures", "trl", "grpo.json")
MAX_COMPLETION_LENGTH = 8
PAD = 297  # the fixture tokenizer's eos/pad id

# ---- fixed data (seeded); rewards are multiples of 1/8 so float32 holds them exactly
rng = random.Random(20260601)
LOSS_REWARDS = [[1.0, 0.0, 0.5, 0.25], [0.75, 1.5, 0.0, 0.125], [1.0, 1.0, 1.0, 1.0]]  # last group: zero std
# Per completion: its length before right padding, and a tool span (m = 0 inside the completion).
LENGTHS = [7, 3, 5, 8, 6, 2, 7, 4, 5, 8, 1, 6]
TOOL_SPANS = {0: (2, 4), 3: (5, 7), 5: (0, 2), 9: (1, 2)}  # row 5: every token masked


def rounded(x):
    return round(x, 6)


def sig(x):
    """12 significant digits: far below the 1e-6 tolerance, and a smaller file."""
    if isinstance(x, list):
        return [sig(v) for v in x]
    return float(f"{x:.12g}")


def make_logps(rows, T):
    lp = [[-rounded(rng.uniform(0.05, 3.0)) for _ in range(T)] for _ in range(rows)]
    old = [[rounded(v + rng.gauss(0.0, 0.25)) for v in row] for row in lp]
    ref = [[rounded(v + rng.gauss(0.0, 0.4)) for v in row] for row in lp]
    return lp, old, ref


def tool_masks(T):
    out = []
    for i, n in enumerate(LENGTHS):
        row = [1] * n
        a, b = TOOL_SPANS.get(i, (0, 0))
        for t in range(a, min(b, n)):
            row[t] = 0
        out.append(row)
    return out


ADV_REWARDS = {
    "nullAndZeroStd": [[1.0, 0.0, 0.0, 1.0], [0.75, None, 1.5, 0.0], [0.5, 0.5, 0.5, 0.5]],
    "mixed": [[rng.randint(0, 16) / 8 for _ in range(5)] for _ in range(4)],
}


# ---- one real trainer per configuration
_tok = None
_model = None


def base_objects():
    global _tok, _model
    if _tok is None:
        _tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(MODEL, "tokenizer.json"))
        eos = _tok.convert_ids_to_tokens(PAD)
        _tok.eos_token = eos
        _tok.pad_token = eos
        _model = AutoModelForCausalLM.from_pretrained(MODEL, dtype=torch.float64)
    return _tok, _model


class Warnings(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def build_trainer(trl_args, batch):
    tok, model = base_objects()
    G = trl_args.get("num_generations", 4)
    args = GRPOConfig(
        output_dir="/tmp/rlvr-trl-fixtures",
        use_cpu=True,
        report_to=[],
        save_strategy="no",
        per_device_train_batch_size=batch,
        num_generations=G,
        max_completion_length=MAX_COMPLETION_LENGTH,
        **{k: v for k, v in trl_args.items() if k != "num_generations"},
    )
    handler = Warnings()
    logger = logging.getLogger("trl.trainer.grpo_trainer")
    logger.addHandler(handler)
    try:
        ds = Dataset.from_list([{"prompt": "p", "r": 0.0}] * batch)
        trainer = GRPOTrainer(model=model, reward_funcs=reward_from_column, args=args, train_dataset=ds,
                              processing_class=tok)
    finally:
        logger.removeHandler(handler)
    return trainer, [m for m in handler.messages if "importance_sampling_level" in m]


def reward_from_column(prompts, completions, r, **_):
    return list(r)


def trl_advantages(trainer, rewards, masks):
    """Runs TRL's _generate_and_score_completions on fixed completions and rewards; returns its outputs."""
    flat = [r for g in rewards for r in g]
    B = len(flat)
    lengths = [len(m) for m in masks] if masks else [3] * B

    def fake_generate(prompts):
        prompt_ids = [[1, 2] for _ in prompts]
        completion_ids = [[5 + (t % 7) for t in range(lengths[i])] for i in range(B)]
        tool = masks if masks else None
        return prompt_ids, completion_ids, tool, ["x"] * B, None, None, None, None

    def fixed_logps(model, input_ids, attention_mask, logits_to_keep, *a, **k):
        # Only reached for the reference (β > 0): values are replaced by the fixture's ref log-probs later.
        return torch.zeros(input_ids.size(0), logits_to_keep), None, None

    trainer._generate = fake_generate
    trainer._get_per_token_logps_and_entropies = fixed_logps
    inputs = [{"prompt": "p", "r": v} for v in flat]
    return trainer._generate_and_score_completions(inputs)


def pad_rows(rows, T, value=0.0):
    return [list(r) + [value] * (T - len(r)) for r in rows]


def loss_case(name, trl_args, micro=None):
    """One loss fixture: TRL advantages on LOSS_REWARDS, then TRL's _compute_loss on fixed log-probs."""
    flat_rewards = [r for g in LOSS_REWARDS for r in g]
    B = len(flat_rewards)
    T = max(LENGTHS)
    trainer, warnings = build_trainer(trl_args, B)
    masks = tool_masks(T)
    out = trl_advantages(trainer, LOSS_REWARDS, masks)
    lp, old, ref = make_logps(B, T)
    mask = out["completion_mask"] * out["tool_mask"]  # (B, T) as _compute_loss builds it
    rows = list(range(B)) if micro is None else micro["rows"]
    ga = 1 if micro is None else micro["gradientAccumulationSteps"]

    logp_leaf = torch.tensor([lp[i] for i in rows], dtype=torch.float64, requires_grad=True)

    def policy_logps(model, input_ids, attention_mask, logits_to_keep, *a, **k):
        return logp_leaf, torch.zeros_like(logp_leaf), None

    trainer._get_per_token_logps_and_entropies = policy_logps
    trainer.current_gradient_accumulation_steps = ga
    trainer.args.steps_per_generation = ga
    inputs = {
        "prompt_ids": out["prompt_ids"][rows],
        "prompt_mask": out["prompt_mask"][rows],
        "completion_ids": out["completion_ids"][rows],
        "completion_mask": out["completion_mask"][rows],
        "tool_mask": out["tool_mask"][rows],
        "advantages": out["advantages"][rows],
        "num_items_in_batch": out["num_items_in_batch"],
    }
    on_policy = trl_args.get("num_iterations", 1) == 1
    if not on_policy:
        inputs["old_per_token_logps"] = torch.tensor([old[i] for i in rows], dtype=torch.float64)
    if trl_args.get("beta", 0.0) != 0.0:
        inputs["ref_per_token_logps"] = torch.tensor([ref[i] for i in rows], dtype=torch.float64)
    trainer.model.train()
    loss = trainer._compute_loss(trainer.model, inputs)
    loss.backward()
    m = mask.tolist()
    return {
        "name": name,
        "trl": {**trl_args, "max_completion_length": MAX_COMPLETION_LENGTH,
                "epsilon_high_resolved": trainer.epsilon_high},
        **({"micro": micro} if micro else {}),
        "trlWarnings": warnings,
        "rewards": LOSS_REWARDS,
        "trlAdvantages": sig(out["advantages"].tolist()),
        "numItemsInBatch": int(out["num_items_in_batch"].item()),
        # Rows of the loss call; token positions past a completion's length are padding (m = 0).
        "rows": rows,
        "logp": [lp[i] for i in rows],
        "oldLogp": None if on_policy else [old[i] for i in rows],
        "refLogp": [ref[i] for i in rows] if trl_args.get("beta", 0.0) != 0.0 else None,
        "mask": [[int(v) for v in m[i]] for i in rows],
        "loss": sig(loss.item()),
        "grad": sig(logp_leaf.grad.tolist()),
    }


def advantage_case(name, rewards_name, scale):
    rewards = ADV_REWARDS[rewards_name]
    G = len(rewards[0])
    B = G * len(rewards)
    trainer, _ = build_trainer({"scale_rewards": scale, "num_generations": G, "beta": 0.0}, B)
    out = trl_advantages(trainer, rewards, None)
    return {"name": name, "trl": {"scale_rewards": scale, "num_generations": G}, "rewards": rewards,
            "advantages": sig(out["advantages"].tolist())}


def loss_cases():
    cases = []
    base = {"scale_rewards": "group", "num_iterations": 2}
    for loss_type in ["grpo", "bnpo", "dr_grpo", "dapo"]:
        for level in ["token", "sequence"]:
            eps = ({"epsilon": 0.2, "epsilon_high": 0.28} if level == "token"
                   else {"epsilon": 0.04, "epsilon_high": 0.06})
            common = {**base, "loss_type": loss_type, "importance_sampling_level": level, **eps}
            cases.append(loss_case(f"{loss_type}/{level}/beta0", {**common, "beta": 0.0}))
            cases.append(loss_case(f"{loss_type}/{level}/beta0.04/biasCorrectionKl",
                                   {**common, "beta": 0.04, "use_bias_correction_kl": True}))
            cases.append(loss_case(f"{loss_type}/{level}/beta0.04/plainKl",
                                   {**common, "beta": 0.04, "use_bias_correction_kl": False}))
    tok = {"importance_sampling_level": "token", "epsilon": 0.2, "num_iterations": 2, "beta": 0.0}
    for scale in ["batch", "none"]:
        for loss_type in ["grpo", "dapo"]:
            cases.append(loss_case(f"{loss_type}/token/scale-{scale}",
                                   {**tok, "loss_type": loss_type, "scale_rewards": scale}))
    # On-policy (num_iterations 1: TRL uses logp.detach() as the old log-probs, ratio exactly 1).
    for loss_type, level in [("grpo", "token"), ("dapo", "sequence"), ("bnpo", "token")]:
        cases.append(loss_case(f"{loss_type}/{level}/onPolicy/beta0.1/biasCorrectionKl",
                               {"loss_type": loss_type, "importance_sampling_level": level, "num_iterations": 1,
                                "beta": 0.1, "use_bias_correction_kl": True, "epsilon": 0.2}))
    # δ (INTELLECT-2 two-sided clip = dual clip on A < 0), asymmetric ε.
    for loss_type, level, delta in [("grpo", "token", 1.25), ("dr_grpo", "token", 1.25), ("grpo", "sequence", 1.05)]:
        eps = {"epsilon": 0.1, "epsilon_high": 0.15} if level == "token" else {"epsilon": 0.02, "epsilon_high": 0.03}
        cases.append(loss_case(f"{loss_type}/{level}/delta{delta}",
                               {"loss_type": loss_type, "importance_sampling_level": level, "num_iterations": 3,
                                "beta": 0.02, "delta": delta, "scale_rewards": "group", **eps}))
    # One micro-batch of a gradient-accumulation window (rows 0..5 of 12, 2 accumulation steps).
    for loss_type in ["grpo", "bnpo", "dr_grpo", "dapo"]:
        cases.append(loss_case(f"{loss_type}/token/microBatch", {"loss_type": loss_type, "num_iterations": 2,
                                                                 "beta": 0.04, "epsilon": 0.2},
                               micro={"rows": list(range(6)), "gradientAccumulationSteps": 2}))
    return cases


def main():
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(0)
    advantages = [advantage_case(f"{r}/scale-{s}", r, s) for r in ADV_REWARDS for s in ["group", "batch", "none"]]
    losses = loss_cases()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    doc = {
        "generatedBy": "scripts/make-trl-fixtures.py",
        "versions": {"trl": version("trl"), "torch": torch.__version__, "transformers": version("transformers")},
        "maxCompletionLength": MAX_COMPLETION_LENGTH,
        "advantages": advantages,
        "losses": losses,
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT}: {len(advantages)} advantage and {len(losses)} loss configurations", file=sys.stderr)


if __name__ == "__main__":
    main()
