"""The tiny model of the RL tests, built locally in seconds (nothing is downloaded).

Reuses `examples/trl_grpo_tiny.py`'s builders (a byte-level BPE tokenizer trained here, wrapped as
`PreTrainedTokenizerFast` with TRL's ChatML template; a `Qwen2Config` with vocab = the tokenizer's,
hidden 128, 2 layers, 4 heads, random weights), so the RL tests and the TRL example share one model.
`save_tiny(dir)` writes both as a Hugging Face model directory, which is what the learner loads.
`make_batch` / `with_sampler_logprobs`: small random learner batches (with tool tokens) for the tests.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import torch

from kgym.rl import Sample, TrainBatch

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "trl_grpo_tiny.py"
_spec = importlib.util.spec_from_file_location("kgym_trl_grpo_tiny", EXAMPLE)
_example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_example)


def corpus() -> list[str]:
    """The tokenizer's fixed training text, the one `python -m jobs.tiny_model` uses (one model for
    the tests, the example and the CPU configs)."""
    from jobs.tiny_model import corpus as fixed

    return fixed()


def tiny_tokenizer():
    """The example's tokenizer; where TRL is absent (the H200 image) the same BPE without TRL's chat
    template, which the learner never renders."""
    if importlib.util.find_spec("trl") is not None:
        return _example.tiny_tokenizer(corpus())
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(corpus(), trainers.BpeTrainer(vocab_size=1024, special_tokens=specials,
                                                          initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   padding_side="left")


def tiny_model(tokenizer):
    return _example.tiny_model(tokenizer)


def save_tiny(directory: Path) -> tuple[Path, object]:
    tok = tiny_tokenizer()
    model = tiny_model(tok)
    model.save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory, tok


def make_batch(seed: int, n: int = 4, with_tool_tokens: bool = True) -> TrainBatch:
    g = torch.Generator().manual_seed(seed)
    samples = []
    for i in range(n):
        p, c = 4 + (i % 3), 5 + (i % 2) * 3
        mask = [1] * c
        if with_tool_tokens:
            mask[2:4] = [0, 0]  # a tool result in the middle of the completion
        samples.append(Sample(prompt_ids=torch.randint(3, 1000, (p,), generator=g).tolist(),
                              completion_ids=torch.randint(3, 1000, (c,), generator=g).tolist(), loss_mask=mask,
                              group_id=f"task-{seed}", reward=float(i % 2) + 0.1 * i))
    return TrainBatch(tuple(samples))


def with_sampler_logprobs(learner, batch: TrainBatch, offset: float = 0.0) -> TrainBatch:
    lps = learner.logprobs(batch)
    return TrainBatch(tuple(dataclasses.replace(s, sampler_logprobs=tuple((lp - offset).clamp(max=0.0).tolist()))
                            for s, lp in zip(batch.samples, lps)))
