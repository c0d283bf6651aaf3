"""The SFT job: TRL's SFTTrainer with a peft LoRA on the curated chat Parquet -> an adapter directory.

    python -m jobs.sft --config jobs/configs/sft.toml [--set model=/models/qwen --set qlora=true]

The recipe is the study's: LoRA rank 8, 2 epochs, learning rate 2e-4, sequences up to 4,096 tokens
(the curation job already dropped longer rows), loss on the assistant turns only. QLoRA (the base
in bitsandbytes NF4, the adapter in bf16) is an option for a base too large for the GPU in bf16.
On CPU (tests, a laptop) `cpu = true` gives TRL `use_cpu=True, bf16=False`. The adapter is written
to OUT/adapter (adapter_config.json + adapter_model.safetensors, with the tokenizer) through a
temporary directory renamed at the end, so a half-written adapter is never read; peft loads it
(`PeftModel.from_pretrained`), vLLM serves it (`LoRARequest`), and the learner starts RL from it
(it is RL's reference policy). Trainer checkpoints go to OUT/trainer. Does not curate data
(`jobs/curate.py`) or evaluate the adapter (`jobs/eval.py`).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from jobs.job_cli import job_main, parser
from jobs.sections import option, section
from kgym.training.learner_config import LORA_TARGETS


@dataclass(frozen=True)
class SFTLoraSection:
    """[lora]: the adapter (peft's LoraConfig; the SFT job's own: RL's learner trains without dropout)."""

    r: int = option(8, "LoRA rank (the study: 8)", ge=1, le=1024)
    alpha: int = option(16, "LoRA alpha (scale alpha / r)", ge=1)
    dropout: float = option(0.05, "dropout on the LoRA input", ge=0, le=1)
    target_modules: tuple[str, ...] = option(LORA_TARGETS, "the linear layers that get an adapter (every linear "
                                             "layer of a Qwen2/Llama-style block, as the RL learner's)")


@dataclass(frozen=True)
class SFTJobConfig:
    dataset: str = option(doc="the curated Parquet (its `messages` column): jobs.curate's dataset.parquet")
    model: str = option(doc="base model: a local directory or a model id in the local cache")
    out: str = option("out/sft", "OUT/adapter, OUT/trainer, OUT/sft_summary.json")
    epochs: float = option(2.0, "epochs over the set (the study: 2)", gt=0)
    learning_rate: float = option(2e-4, "peak learning rate, cosine schedule (the study: 2e-4)", gt=0)
    max_length: int = option(4096, "tokens per sequence; the curation job dropped longer rows", ge=16)
    batch_size: int = option(1, "sequences per device per step", ge=1)
    grad_accum: int = option(1, "gradient accumulation steps", ge=1)
    max_steps: int = option(-1, "> 0 stops there (tests, smoke runs); -1 runs the epochs", ge=-1)
    warmup: float = option(0.03, "transformers 5 warmup_steps: below 1, a fraction of the steps", ge=0)
    qlora: bool = option(False, "base in bitsandbytes NF4 (double quantisation), adapter in bf16")
    assistant_only_loss: bool = option(True, "loss on the answers only, not on the prompts")
    cpu: bool = option(False, "train on the CPU: use_cpu=True, bf16=False")
    gradient_checkpointing: bool = option(True, "recompute activations in backward (memory for time)")
    seed: int = option(0, "seed of the adapter's initialisation and the data order", ge=0)
    logging_steps: int = option(10, "log every this many steps", ge=1)
    lora: SFTLoraSection = section(SFTLoraSection, "the LoRA adapter")


@dataclass(frozen=True)
class SFTResult:
    adapter: str  # the adapter directory
    steps: int
    train_loss: float | None
    rows: int
    wall_s: float


def _model(config: SFTJobConfig):
    import torch
    from transformers import AutoModelForCausalLM

    dtype = torch.float32 if config.cpu else torch.bfloat16
    kwargs: dict = {"dtype": dtype}
    if config.qlora:
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                                           bnb_4bit_compute_dtype=dtype, bnb_4bit_use_double_quant=True)
        kwargs["device_map"] = {"": "cpu" if config.cpu else 0}
    return AutoModelForCausalLM.from_pretrained(config.model, **kwargs)


def run_sft(config: SFTJobConfig, log=print) -> SFTResult:
    from datasets import load_dataset
    from peft import LoraConfig
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    t0 = time.perf_counter()
    out = Path(config.out)
    data = load_dataset("parquet", data_files=config.dataset, split="train")
    data = data.select_columns(["messages"])  # the rest is metadata for analysis, not training input
    tokenizer = AutoTokenizer.from_pretrained(config.model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    args = SFTConfig(output_dir=str(out / "trainer"), num_train_epochs=config.epochs, max_steps=config.max_steps,
                     learning_rate=config.learning_rate, lr_scheduler_type="cosine", warmup_steps=config.warmup,
                     per_device_train_batch_size=config.batch_size, gradient_accumulation_steps=config.grad_accum,
                     max_length=config.max_length, assistant_only_loss=config.assistant_only_loss,
                     gradient_checkpointing=config.gradient_checkpointing, logging_steps=config.logging_steps,
                     save_strategy="no", report_to="none", seed=config.seed,
                     use_cpu=config.cpu, bf16=not config.cpu)
    lora = LoraConfig(r=config.lora.r, lora_alpha=config.lora.alpha, lora_dropout=config.lora.dropout,
                      target_modules=list(config.lora.target_modules), task_type="CAUSAL_LM")
    trainer = SFTTrainer(model=_model(config), args=args, train_dataset=data, processing_class=tokenizer,
                         peft_config=lora)
    log(f"jobs.sft: {len(data)} rows, LoRA r={config.lora.r}{' on an NF4 base' if config.qlora else ''}, "
        f"max length {config.max_length}, {'CPU' if config.cpu else 'GPU'}")
    train = trainer.train()
    final, tmp = out / "adapter", out / ".adapter.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    trainer.save_model(str(tmp))  # a peft model saves adapter_config.json + adapter_model.safetensors
    tokenizer.save_pretrained(str(tmp))
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    result = SFTResult(adapter=str(final), steps=int(train.global_step), train_loss=float(train.training_loss),
                       rows=len(data), wall_s=time.perf_counter() - t0)
    (out / "sft_summary.json").write_text(json.dumps({"result": asdict(result), "config": asdict(config)}, indent=1))
    log(f"jobs.sft: {result.steps} steps, train loss {result.train_loss:.4f}, {result.wall_s:.0f} s; "
        f"adapter in {final}")
    return result


def main(argv: list[str] | None = None) -> int:
    from jobs import preflight

    return job_main(parser("sft", __doc__, "lora.r=16"), SFTJobConfig, run_sft, argv, preflight=preflight.sft)


if __name__ == "__main__":
    sys.exit(main())
