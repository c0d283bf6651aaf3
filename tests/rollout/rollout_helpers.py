"""Helpers of the rollout tests: LoRA adapters for the tiny model, and a scripted engine with
VLLMEngine.generate's signature whose text is a function of the decoded prompt."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kgym.rollout.engine import Completion, FinishReason

HAVE_VLLM = importlib.util.find_spec("vllm") is not None
requires_vllm = pytest.mark.skipif(not HAVE_VLLM, reason="vLLM is not installed (pip install -e '.[rollout]')")


def make_adapter(model_dir: Path, out: Path, seed: int, rank: int = 8) -> Path:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    cfg = LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0,
                     target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
    peft_model = get_peft_model(model, cfg)
    with torch.no_grad():
        for name, p in peft_model.named_parameters():
            if "lora_B" in name or "lora_A" in name:
                p.normal_(0.0, 0.5)
    peft_model.save_pretrained(out)
    return out


def tool_call_text(name: str, **arguments) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


class ScriptedEngine:
    """`script(prompt_text) -> answer text`; tokens are the tokenizer's, each logprob -1.0."""

    def __init__(self, tokenizer, script: Callable[[str], str]):
        self.tokenizer = tokenizer
        self.script = script
        self.calls: list[int] = []  # batch size of each generate call
        self.loaded: set[int] = set()
        self.removed: set[int] = set()

    def load(self, adapter) -> bool:
        if adapter.lora_id is not None:
            self.loaded.add(adapter.lora_id)
        return True

    def unload(self, adapter) -> bool:
        self.loaded.discard(adapter.lora_id)
        self.removed.add(adapter.lora_id)
        return True

    def serves(self, adapter) -> bool:
        return adapter is None or adapter.lora_id not in self.removed

    def generate(self, prompts, sampling, adapters, *, n=1, seeds=None):
        self.calls.append(len(prompts))
        out = []
        for p, a in zip(prompts, adapters):
            text = self.script(self.tokenizer.decode(list(p)))
            ids = tuple(self.tokenizer.encode(text, add_special_tokens=False)) + (self.tokenizer.eos_token_id,)
            out.append([Completion(ids, (-1.0,) * len(ids), text, FinishReason.STOP, a.version if a else 0,
                                   a.lora_id if a else None)])
        return out
