"""TRL GRPOTrainer side of `npm run bench:trl:learn` (bench/trl-learn.ts writes the settings JSON).

Trains the SFT start (an HF Llama checkpoint written by rlvr's saveModel) with TRL's GRPOTrainer on CPU, on the
task's train prompts, with the settings of the rlvr side: G, prompts per step, learning rate, beta, max new tokens,
temperature, steps, and the GRPOConfig fields in `trl_options` (bench/trl-learn.ts maps them with fromTrlGrpo).
The reward is rlvr's own: a worker process (bench/trl-score-worker.ts) scores every completion with the task's
reward terms, so both sides train on the same rule. Every `save_every` steps the policy is saved (safetensors,
plus the start's tokenizer.json) under out_dir/step-N; bench/trl-learn.ts evaluates those checkpoints with the
same evaluator, questions and decoding as its own. Prints one JSON line per step {"step", "reward", "length"}.
"""
import json
import shutil
import subprocess
import sys

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, TrainerCallback
from trl import GRPOConfig, GRPOTrainer


class Scorer:
    """The rlvr scoring worker: one JSON line per batch each way."""

    def __init__(self, s):
        cmd = [s["tsx"], s["score_worker"], s["task"], json.dumps(s["task_options"]), str(s["train_examples"])]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.__name__ = "rlvr_task_reward"  # TRL names the reward column after the function

    def __call__(self, prompts, completions, **_):
        self.proc.stdin.write(json.dumps({"prompts": prompts, "completions": completions}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the rlvr score worker exited")
        return [float("nan") if r is None else r for r in json.loads(line)["rewards"]]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


class SaveEvery(TrainerCallback):
    """Saves the policy every `every` steps for the held-out evaluation, and prints each step's reward."""

    def __init__(self, out_dir, every, tokenizer_file):
        self.out_dir, self.every, self.tokenizer_file = out_dir, every, tokenizer_file

    def on_log(self, args, state, control, logs=None, **kw):
        if logs and "reward" in logs:
            print(json.dumps({"step": state.global_step, "reward": logs["reward"],
                              "length": logs.get("completions/mean_length")}), flush=True)

    def on_step_end(self, args, state, control, model=None, **kw):
        if state.global_step % self.every == 0 or state.global_step == state.max_steps:
            d = f"{self.out_dir}/step-{state.global_step}"
            model.save_pretrained(d, safe_serialization=True)
            shutil.copy(self.tokenizer_file, f"{d}/tokenizer.json")


def main():
    s = json.load(open(sys.argv[1]))
    torch.manual_seed(s["seed"])
    torch.set_num_threads(s.get("threads", 2))
    tok_file = f"{s['model_dir']}/tokenizer.json"
    tok = PreTrainedTokenizerFast(tokenizer_file=tok_file)
    cfg = json.load(open(f"{s['model_dir']}/config.json"))
    eos = tok.convert_ids_to_tokens(cfg["eos_token_id"])
    tok.eos_token = eos
    tok.pad_token = eos
    model = AutoModelForCausalLM.from_pretrained(s["model_dir"], dtype=torch.float32)
    ds = Dataset.from_list([{"prompt": p} for p in s["prompts"]])
    G, Q = s["G"], s["prompts_per_step"]
    args = GRPOConfig(**{**dict(
        output_dir=s["out_dir"],
        use_cpu=True,
        seed=s["seed"],
        max_steps=s["steps"],
        learning_rate=s["lr"],
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        per_device_train_batch_size=G * Q,
        gradient_accumulation_steps=1,
        num_generations=G,
        temperature=s["temperature"],
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        disable_dropout=True,
        dataloader_num_workers=0,
    ), **s["trl_options"]})
    scorer = Scorer(s)
    trainer = GRPOTrainer(model=model, reward_funcs=scorer, args=args, train_dataset=ds, processing_class=tok,
                          callbacks=[SaveEvery(s["out_dir"], s["save_every"], tok_file)])
    try:
        trainer.train()
    finally:
        scorer.close()


if __name__ == "__main__":
    main()
