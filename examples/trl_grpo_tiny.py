"""A couple of GRPO steps of TRL 1.16 on CPU with kgym's reward function, on a tiny random model.

    pip install -e '.[rl]'            # trl, transformers, datasets, accelerate (torch CPU as installed)
    python examples/trl_grpo_tiny.py [--steps 2] [--tasks relu-v1,softmax-v1] [--mix]

Nothing is downloaded: the model is a `Qwen2Config` (vocab 1024, hidden 128, 2 layers, 4 heads) with
random weights, the tokenizer a byte-level BPE trained here on the tasks' own prompts, wrapped as a
`PreTrainedTokenizerFast` with the ChatML template TRL ships for Qwen2.5 (it renders tools too).
The model writes garbage, so its answers hold no code block and score 0 with that reason; the point
is that the wiring runs end to end: kgym tasks -> dataset -> GRPOTrainer -> completions ->
`KgymReward` -> the real verifier (CPU, Triton interpreter). Before training, the same reward
function scores two scripted answers (a known-wrong kernel and a no-code answer) so the verifier's
part is visible. `--mix` draws each row's mode from `ModeMix` (25% single / 75% repair) and hands
GRPOTrainer kgym's tool environments for the repair rows.
Prints one JSON line per phase; the last is the summary.
"""

from __future__ import annotations

import argparse
import importlib.resources
import json
import tempfile
import time


def tiny_tokenizer(texts: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=1024, special_tokens=specials,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   padding_side="left")
    fast.chat_template = (importlib.resources.files("trl") / "chat_templates" / "qwen2_5.jinja").read_text()
    return fast


def tiny_model(tokenizer):
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=len(tokenizer), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192,
                      pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    return Qwen2ForCausalLM(cfg)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--tasks", default="relu-v1,softmax-v1")
    ap.add_argument("--generations", type=int, default=4)
    ap.add_argument("--completion-tokens", type=int, default=24)
    ap.add_argument("--mix", action="store_true", help="25%% single / 75%% repair rows with kgym's tool environments")
    args = ap.parse_args(argv)

    from trl import GRPOConfig, GRPOTrainer

    from kgym.episodes import CachedEvaluator, EpisodeConfig, LocalEvaluator, ModeMix
    from kgym.episodes.trl_adapter import KgymReward, build_dataset, environment_factories
    from kgym.tasks import make
    from kgym.verify import Verifier, VerifyConfig

    t0 = time.time()
    tasks = [make(tid, seed=s, size="tiny") for s in range(2) for tid in args.tasks.split(",")]
    config = EpisodeConfig()
    dataset = build_dataset(tasks, mix=ModeMix(seed=0) if args.mix else None, config=config)
    tokenizer = tiny_tokenizer([t.prompt() for t in tasks] + [m["content"] for t in tasks for m in t.repair_messages()])
    model = tiny_model(tokenizer)

    with Verifier(VerifyConfig(device="cpu", timed_runs=5, warmup_runs=1, max_remeasure=1), spares=1) as verifier:
        # one verifier behind the verdict cache; TRL calls the reward and the tools synchronously, and
        # kgym's adapter runs the async scoring on a private event loop per object (kgym.episodes.sync)
        reward = KgymReward(CachedEvaluator(LocalEvaluator(verifier)))
        # The verifier's part, visible: a known-wrong kernel and an answer without code, as one group.
        t = tasks[0]
        wrong = f"```python\n{t.wrong}```\n"
        check = reward(prompts=[None, None], completions=[[{"role": "assistant", "content": wrong}],
                                                          [{"role": "assistant", "content": "no code"}]],
                       task_spec=[t.spec.to_json()] * 2)
        print(json.dumps({"phase": "scripted", "task": t.task_id, "rewards": check, "details": reward.last}),
              flush=True)

        out_dir = tempfile.mkdtemp(prefix="kgym-grpo-")
        gcfg = GRPOConfig(output_dir=out_dir, use_cpu=True, bf16=False, max_steps=args.steps,
                          per_device_train_batch_size=args.generations, num_generations=args.generations,
                          max_completion_length=args.completion_tokens, learning_rate=1e-5, logging_steps=1,
                          report_to="none", save_strategy="no", seed=0, temperature=1.0,
                          max_tool_calling_iterations=config.max_turns, dataloader_num_workers=0)
        extra = {"environment_factory": environment_factories(reward.evaluator, config)} if args.mix else {}
        trainer = GRPOTrainer(model=model, reward_funcs=reward, args=gcfg, train_dataset=dataset,
                              processing_class=tokenizer, **extra)
        t_train = time.time()
        trainer.train()
        logs = [h for h in trainer.state.log_history if "loss" in h or "reward" in h]
        summary = {"phase": "summary", "steps": trainer.state.global_step, "rows": len(dataset),
                   "modes": sorted(set(dataset["mode"])), "last_batch": reward.last,
                   "rewards_logged": [h.get("reward") for h in logs], "verified": reward.evaluator.verified,
                   "train_s": round(time.time() - t_train, 1), "total_s": round(time.time() - t0, 1)}
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    main()
