"""TRL GRPOTrainer side of `npm run bench:trl` (bench/trl.ts writes the settings JSON and reads our JSON lines).

Trains the tiny Llama fixture (test/fixtures/parity/llama, the same safetensors rlvr loads) with TRL's GRPOTrainer on
the same prompts, G, prompts per step, learning rate, beta, max new tokens, loss type and steps, on CPU, and prints one
JSON line per step {"step", "reward", "length", "time"} plus a final {"steps_per_s"}. `model_dir` may name another
checkpoint written by rlvr's saveModel (bench:trl's larger shape). "time" is the wall clock at the end of the step
(TRL's on_step_end) since training began, less the time spent in the trainer's `log` (metric averaging, callbacks,
printing), and "seconds" the step's own time from TRL's on_step_begin to its on_step_end (what bench/trl.ts compares,
so logging is left out); no evaluation or
checkpoint runs. "length" is TRL's completions/mean_length. `trl_options` in the settings (GRPOConfig
fields by TRL's names, which bench/trl.ts prints beside the rlvr settings) override the fields below. The reward mirrors the
"addition" task's rule: the completion, cut after its first "}" (the task's stop string, where rlvr's sampler stops),
scores 0.2 when it is exactly one non-empty \\boxed{...}, plus 1 when the box holds the answer.

With "turns" in the settings ({"go", "done"}: two named pipes), it trains in lock-step with rlvr, one step each in turn
(bench/harness/turn-peer.ts): "ready" when training begins, then each step waits for a "go" line and answers "done".
"""
import json
import re
import sys
import time

# In lock-step with rlvr (settings "turns"; bench/harness/turn-peer.ts), the pipes are opened before the heavy imports,
# so that a failure anywhere after this point reaches bench:trl as an "error" line instead of leaving it waiting.
SETTINGS = json.load(open(sys.argv[1]))
TURNS = None
if "turns" in SETTINGS:
    TURNS = {"done": open(SETTINGS["turns"]["done"], "w", buffering=1)}
    TURNS["go"] = open(SETTINGS["turns"]["go"], "r")

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, TrainerCallback
from trl import GRPOConfig, GRPOTrainer


def reward_fn(completions, answer, **_):
    out = []
    for text, gold in zip(completions, answer):
        text = text[: text.index("}") + 1] if "}" in text else text
        m = re.fullmatch(r"\s*\\boxed\{([^{}]*)\}\s*", text)
        fmt = 1.0 if m and m.group(1).strip() else 0.0
        correct = 1.0 if m and m.group(1).strip() == gold else 0.0
        out.append(correct + 0.2 * fmt)
    return out


class TimedGRPOTrainer(GRPOTrainer):
    """GRPOTrainer that adds up the seconds spent in `log`, so the step timing can leave logging out."""

    log_seconds = 0.0

    def log(self, logs, *a, **kw):
        t = time.perf_counter()
        super().log(logs, *a, **kw)
        self.log_seconds += time.perf_counter() - t


class StepLog(TrainerCallback):
    def __init__(self):
        self.t0 = None
        self.trainer = None
        self.step_end = None

        self.step_begin = None
        self.seconds = None

    def on_train_begin(self, args, state, control, **kw):
        self.t0 = time.perf_counter()
        if TURNS:
            TURNS["done"].write("ready\n")

    def on_step_begin(self, args, state, control, **kw):
        if TURNS and not TURNS["go"].readline():
            raise RuntimeError("bench:trl closed the turn pipe")
        self.step_begin = time.perf_counter()

    def on_step_end(self, args, state, control, **kw):
        now = time.perf_counter()
        self.step_end = now - self.t0 - self.trainer.log_seconds
        self.seconds = now - self.step_begin
        if TURNS:
            TURNS["done"].write("done\n")

    def on_log(self, args, state, control, logs=None, **kw):
        if logs and "reward" in logs:
            print(json.dumps({"step": state.global_step, "reward": logs["reward"],
                              "length": logs.get("completions/mean_length"), "time": self.step_end,
                              "seconds": self.seconds}), flush=True)


def main():
    s = SETTINGS
    torch.manual_seed(s["seed"])
    torch.set_num_threads(s.get("threads", 2))
    tok = PreTrainedTokenizerFast(tokenizer_file=f"{s['model_dir']}/tokenizer.json")
    cfg = json.load(open(f"{s['model_dir']}/config.json"))
    eos = tok.convert_ids_to_tokens(cfg["eos_token_id"])
    tok.eos_token = eos
    tok.pad_token = eos
    model = AutoModelForCausalLM.from_pretrained(s["model_dir"], torch_dtype=torch.float32)
    ds = Dataset.from_list([{"prompt": p["prompt"], "answer": p["answer"]} for p in s["prompts"]])
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
        max_completion_length=s["max_new_tokens"],
        temperature=1.0,
        beta=s["beta"],
        loss_type=s["loss_type"],
        scale_rewards="group",
        epsilon=0.2,
        num_iterations=1,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        disable_dropout=True,
        dataloader_num_workers=0,
    ), **s.get("trl_options", {})})
    step_log = StepLog()
    trainer = TimedGRPOTrainer(model=model, reward_funcs=reward_fn, args=args, train_dataset=ds, processing_class=tok,
                               callbacks=[step_log])
    step_log.trainer = trainer
    t0 = time.perf_counter()
    trainer.train()
    dt = time.perf_counter() - t0
    print(json.dumps({"steps_per_s": s["steps"] / dt, "seconds": dt}), flush=True)


if __name__ == "__main__":
    try:
        main()
    except BaseException as e:
        if TURNS:
            TURNS["done"].write(f"error {type(e).__name__}: {e}".replace("\n", " ") + "\n")
        raise
