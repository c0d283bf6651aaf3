"""QLoRA CISPO learner steps on Qwen2-architecture models with random weights: peak memory, fwd+bwd
tokens/s and step time.

    python benchmarks/learner_step.py --preset tiny                  # CPU, seconds
    python benchmarks/learner_step.py --preset 1.5b --steps 3        # GPU
    python benchmarks/learner_step.py --preset 7b --steps 3          # GPU

Presets are the published shapes of Qwen2.5-1.5B and Qwen2.5-7B (vocab 151936/152064, 28 layers,
GQA), built from `Qwen2Config` with random weights: nothing is downloaded. The random model is built
once on the device in bf16, saved under `--model-dir` (default /tmp/kgym-bench/PRESET, reused if
there), and loaded back through the learner's own path: NF4 via bitsandbytes, BF16 compute, LoRA
r=8/alpha=16 on q/k/v/o/gate/up/down, gradient checkpointing, AdamW lr 1e-5, beta 0.08 (so every
micro-batch also runs a no-grad reference forward with the adapter disabled).

A step is one group: `--group` samples (8, the study's) of `--seq-len` tokens (prompt
`--prompt-len`, the rest completion, all model tokens), micro-batched by `--token-budget` with
gradient accumulation. Sampler log-probs are given (as vLLM would, here random); `--correction tis` (the default) or
`recompute` adds the learner's own old-logprob pass, `none` skips it. `--logits-chunk` sets the
chunked log-probs (0: the full-logits path, to compare peak memory on long sequences:
`--seq-len 16384 --group 1 --logits-chunk 0` against the default 1024).
tokens/s counts the group's tokens over the whole step (reference forward + forward + backward +
optimizer); train_tokens_per_s over the forward + backward pass alone; peak memory is
torch.cuda.max_memory_allocated over the step. The first step is a warm-up and is reported but not
in the summary.

Prints one JSON line per phase and per step (flushed), the last a summary. No Ray needed: the
learner module is loaded from its file, so ray_cluster/__init__ (which imports Ray) is not run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from kgym.rl import Sample, TrainBatch  # noqa: E402

PRESETS = {
    # Qwen2.5-1.5B: 1.54B parameters (embeddings tied)
    "1.5b": dict(vocab_size=151936, hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                 num_attention_heads=12, num_key_value_heads=2, tie_word_embeddings=True),
    # Qwen2.5-7B: 7.6B parameters
    "7b": dict(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
               num_attention_heads=28, num_key_value_heads=4, tie_word_embeddings=False),
    # the tests' tiny model: CPU in seconds
    "tiny": dict(vocab_size=1024, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False),
}
DEFAULT_SEQ = {"1.5b": 4096, "7b": 4096, "tiny": 256}


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def load_learner_core():
    """kgym.training.learner_core: the library's learner, which needs no Ray (the GPU image has none)."""
    return importlib.import_module("kgym.training.learner_core")


def build_random_model(preset: str, target: Path, device: torch.device) -> dict:
    """Random-weight model of the preset's shape saved at `target` (bf16 safetensors); reused if present."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    if (target / "config.json").is_file():
        return {"phase": "model", "preset": preset, "path": str(target), "reused": True}
    t0 = time.perf_counter()
    cfg = Qwen2Config(**PRESETS[preset], max_position_embeddings=32768, rope_theta=1e6, rms_norm_eps=1e-6,
                      pad_token_id=0, eos_token_id=1, bos_token_id=1)
    torch.manual_seed(0)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)  # half the memory of building in float32, and the saved dtype
    try:
        with torch.device(device):  # random init on the GPU: seconds instead of minutes on the host
            model = Qwen2ForCausalLM(cfg)
    finally:
        torch.set_default_dtype(previous)
    params = sum(p.numel() for p in model.parameters())
    built = time.perf_counter() - t0
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    model.save_pretrained(tmp)
    del model
    if device.type == "cuda":
        torch.cuda.empty_cache()
    os.rename(tmp, target)  # a half-written model directory is never mistaken for a whole one
    return {"phase": "model", "preset": preset, "path": str(target), "reused": False, "parameters": params,
            "build_s": round(built, 1), "save_s": round(time.perf_counter() - t0 - built, 1)}


def make_group(n: int, seq_len: int, prompt_len: int, vocab: int, seed: int) -> TrainBatch:
    g = torch.Generator().manual_seed(seed)
    completion = seq_len - prompt_len
    samples = []
    for i in range(n):
        samples.append(Sample(prompt_ids=torch.randint(2, vocab, (prompt_len,), generator=g).tolist(),
                              completion_ids=torch.randint(2, vocab, (completion,), generator=g).tolist(),
                              loss_mask=[1] * completion, group_id=f"g{seed}", reward=float(i % 3) / 2,
                              sampler_logprobs=(-torch.rand(completion, generator=g) * 8).tolist()))
    return TrainBatch(tuple(samples))


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    ap.add_argument("--steps", type=int, default=3, help="timed steps after one warm-up step")
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=None, help="tokens per sample (default 4096; tiny 256)")
    ap.add_argument("--prompt-len", type=int, default=None, help="default seq-len / 8")
    ap.add_argument("--token-budget", type=int, default=None, help="padded tokens per micro-batch (default seq-len)")
    ap.add_argument("--no-quantize", action="store_true", help="bf16 base instead of NF4")
    ap.add_argument("--no-checkpointing", action="store_true", help="turn gradient checkpointing off")
    ap.add_argument("--logits-chunk", type=int, default=1024,
                    help="completion rows per lm_head + log-softmax chunk (0: full logits, the pre-issue-28 path)")
    ap.add_argument("--correction", choices=("tis", "recompute", "none"), default="tis",
                    help="sampler/learner correction (tis and recompute add one no-grad forward per micro-batch)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--model-dir", default=None,
                    help="where the random model is saved (default /tmp/kgym-bench/PRESET)")
    ap.add_argument("--json", default=None, help="also write the summary here")
    args = ap.parse_args(argv)

    core = load_learner_core()
    device = core.resolve_device(args.device)
    seq = args.seq_len or DEFAULT_SEQ[args.preset]
    prompt = args.prompt_len or max(1, seq // 8)
    budget = args.token_budget or seq
    if not 0 < prompt < seq:
        ap.error("need 0 < --prompt-len < --seq-len")
    env = {"phase": "env", "torch": torch.__version__, "device": str(device),
           "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None}
    for name in ("transformers", "peft", "bitsandbytes"):
        try:
            env[name] = __import__(name).__version__
        except Exception as exc:  # report, then fail below where the learner needs it
            env[name] = f"missing: {exc.__class__.__name__}"
    emit(env)

    target = Path(args.model_dir or f"/tmp/kgym-bench/{args.preset}")
    target.parent.mkdir(parents=True, exist_ok=True)
    emit(build_random_model(args.preset, target, device))

    t0 = time.perf_counter()
    dtype = "bfloat16"
    config = core.LearnerConfig(model_path=str(target), quantize_4bit=not args.no_quantize, compute_dtype=dtype,
                                device=str(device), token_budget=budget,
                                gradient_checkpointing=not args.no_checkpointing, total_steps=max(args.steps + 1, 2),
                                logits_chunk=args.logits_chunk, correction=args.correction)
    learner = core.Learner(config)
    trainable = sum(p.numel() for p in learner.trainable)
    loaded = {"phase": "learner", "load_s": round(time.perf_counter() - t0, 1), "trainable_parameters": trainable,
              "quantized": config.quantize_4bit, "gradient_checkpointing": config.gradient_checkpointing}
    if device.type == "cuda":
        loaded["memory_after_load_gib"] = round(torch.cuda.memory_allocated(device) / 2**30, 2)
    emit(loaded)

    vocab = PRESETS[args.preset]["vocab_size"]
    timed = []
    for k in range(args.steps + 1):
        m = learner.step(make_group(args.group, seq, prompt, vocab, seed=k))
        rec = {"phase": "step", "warmup": k == 0, "step": m.step, "status": str(m.status),
               "step_time_s": round(m.step_time_s, 3), "prepass_s": round(m.prepass_s, 3),
               "train_pass_s": round(m.train_pass_s, 3), "optimizer_s": round(m.optimizer_s, 3), "tokens": m.tokens,
               "tokens_per_s": round(m.tokens_per_s, 1),
               "peak_memory_gib": round(m.peak_memory_bytes / 2**30, 2), "micro_batches": m.micro_batches,
               "loss": m.loss, "kl": m.kl, "grad_norm": m.grad_norm, "entropy": m.entropy,
               "logprob_drift": m.logprob_drift, "is_truncated_fraction": m.is_truncated_fraction}
        emit(rec)
        if k > 0:
            timed.append(m)
    summary = {"phase": "summary", "preset": args.preset, "device": env["gpu"] or str(device), "group": args.group,
               "seq_len": seq, "prompt_len": prompt, "token_budget": budget, "quantized": config.quantize_4bit,
               "logits_chunk": config.logits_chunk, "correction": config.correction, "steps": len(timed)}
    if timed:
        summary.update(step_time_s=round(statistics.median(m.step_time_s for m in timed), 3),
                       prepass_s=round(statistics.median(m.prepass_s for m in timed), 3),
                       train_pass_s=round(statistics.median(m.train_pass_s for m in timed), 3),
                       train_tokens_per_s=round(statistics.median(m.tokens / m.train_pass_s for m in timed), 1),
                       tokens_per_s=round(statistics.median(m.tokens_per_s for m in timed), 1),
                       peak_memory_gib=round(max(m.peak_memory_bytes for m in timed) / 2**30, 2),
                       peak_memory_kind="cuda max allocated" if device.type == "cuda" else "process peak RSS")
    emit(summary)
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()
