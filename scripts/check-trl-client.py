"""TRL side of `npm run check:trl-client` (scripts/check-trl-client.ts writes the settings JSON and reads our lines).

Trains the tiny Llama fixture (test/fixtures/parity/llama, CPU, no downloads) for a few steps with TRL's real
GRPOTrainer, whose reward functions are rlvr_client.TrlReward instances calling `rlvr serve-rewards` on loopback.
After each step it prints one JSON line {"step", "rows": [{"prompt", "completion", "rewards": {name: value}}]} read
from the trainer's own completion log (`GRPOTrainer._logs`: the decoded completions and the per-function rewards
TRL put into its reward tensor, float32, NaN where the function returned None; NaN is written as null), and after
each log a line {"step", "logged": {...}} with TRL's logged `rewards/<name>/mean`. The Node side scores the same
completions in process and compares.
"""
import json
import math
import os
import sys
import time

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))
import rlvr_client  # noqa: E402


def reward_funcs(s, client):
    """One TrlReward per entry of s["rewards"]: {name, reward | task, options, gold: "column" | "answer-object"}."""
    out = []
    for r in s["rewards"]:
        gold = (lambda row: {"answer": row["answer"]}) if r["gold"] == "answer-object" else r["gold"]
        out.append(rlvr_client.TrlReward(r.get("reward"), task=r.get("task"), options=r.get("options"), gold=gold,
                                         client=client, name=r["name"]))
    return out


class Record(TrainerCallback):
    """Prints what TRL computed at the end of each step (its completion log) and what it logged."""

    def __init__(self, names):
        self.names = names
        self.trainer = None

    def on_step_end(self, args, state, control, **kw):
        logs = self.trainer._logs
        rows = []
        for i, (prompt, completion) in enumerate(zip(logs["prompt"], logs["completion"])):
            values = {n: logs["rewards"][n][i] for n in self.names}
            rows.append({"prompt": prompt, "completion": completion,
                         "rewards": {n: None if math.isnan(v) else v for n, v in values.items()}})
        print(json.dumps({"step": state.global_step, "rows": rows}), flush=True)

    def on_log(self, args, state, control, logs=None, **kw):
        keys = [f"rewards/{n}/mean" for n in self.names]
        if logs and any(k in logs for k in keys):
            print(json.dumps({"step": state.global_step, "logged": {k: logs.get(k) for k in keys}}), flush=True)


def main():
    s = json.load(open(sys.argv[1]))
    torch.manual_seed(s["seed"])
    torch.set_num_threads(s.get("threads", 1))
    tok = PreTrainedTokenizerFast(tokenizer_file=f"{s['model_dir']}/tokenizer.json")
    cfg = json.load(open(f"{s['model_dir']}/config.json"))
    tok.eos_token = tok.pad_token = tok.convert_ids_to_tokens(cfg["eos_token_id"])
    model = AutoModelForCausalLM.from_pretrained(s["model_dir"], dtype=torch.float32)
    ds = Dataset.from_list(s["examples"])  # columns: prompt, answer
    client = rlvr_client.RewardClient(s["url"], s["token"], timeout=60, batch_size=s.get("batch_size", 8))
    funcs = reward_funcs(s, client)
    G, Q = s["G"], s["prompts_per_step"]
    args = GRPOConfig(
        output_dir=s["out_dir"], use_cpu=True, seed=s["seed"], max_steps=s["steps"], learning_rate=1e-3,
        lr_scheduler_type="constant", warmup_steps=0, per_device_train_batch_size=G * Q,
        gradient_accumulation_steps=1, num_generations=G, max_completion_length=s["max_new_tokens"],
        temperature=1.0, beta=0.0, num_iterations=1, logging_steps=1, report_to=[], save_strategy="no",
        dataloader_num_workers=0,
    )
    record = Record([f.__name__ for f in funcs])
    trainer = GRPOTrainer(model=model, reward_funcs=funcs, args=args, train_dataset=ds, processing_class=tok,
                          callbacks=[record])
    record.trainer = trainer
    t0 = time.perf_counter()
    trainer.train()
    print(json.dumps({"done": True, "seconds": time.perf_counter() - t0, "requests": client.requests,
                      "retried": client.retried}), flush=True)


if __name__ == "__main__":
    main()
