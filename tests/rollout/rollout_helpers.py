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
    """`script(prompt_text) -> answer text`; tokens are the tokenizer's, each logprob -1.0. With
    `max_model_len` it refuses a whole call, as vLLM does, when one prompt is empty or of
    `max_model_len` tokens or more, and stops a completion at its max_tokens (finish `length`).
    Its request stream (`add`/`step`, continuous batching) refuses such a prompt alone at `add`, and
    finishes every added request at the next `step`."""

    def __init__(self, tokenizer, script: Callable[[str], str], max_model_len: int | None = None):
        self.tokenizer = tokenizer
        self.script = script
        self.max_model_len = max_model_len
        self.calls: list[int] = []  # batch size of each generate call
        self.max_tokens: list[int] = []  # each request's max_tokens, in order
        self.loaded: set[int] = set()
        self.removed: set[int] = set()
        self.streamed: dict[str, tuple] = {}
        self.steps: list[int] = []  # requests running at each step

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
        samplings = [sampling] * len(prompts) if not isinstance(sampling, (list, tuple)) else sampling
        if self.max_model_len is not None and any(not p or len(p) >= self.max_model_len for p in prompts):
            raise ValueError("a prompt is empty or longer than the maximum model length")  # the whole call
        self.calls.append(len(prompts))
        out = []
        for p, s, a in zip(prompts, samplings, adapters):
            self.max_tokens.append(s.max_tokens)
            out.append([self._complete(p, s, a)])
        return out

    def add(self, prompt, sampling, adapter=None, seed=None) -> str:
        if self.max_model_len is not None and (not prompt or len(prompt) >= self.max_model_len):
            raise ValueError("the prompt is empty or longer than the maximum model length")
        key = f"r{len(self.max_tokens)}-{len(self.streamed)}-{len(self.steps)}"
        self.max_tokens.append(sampling.max_tokens)
        self.streamed[key] = (tuple(prompt), sampling, adapter)
        return key

    @property
    def streaming(self) -> int:
        return len(self.streamed)

    def step(self):
        self.steps.append(len(self.streamed))
        done, self.streamed = self.streamed, {}
        return [(key, self._complete(*req)) for key, req in done.items()]

    def abort_streamed(self):
        keys, self.streamed = list(self.streamed), {}
        return keys

    def _complete(self, prompt, s, a):
        text = self.script(self.tokenizer.decode(list(prompt)))
        ids = tuple(self.tokenizer.encode(text, add_special_tokens=False)) + (self.tokenizer.eos_token_id,)
        finish = FinishReason.STOP
        if len(ids) > s.max_tokens:
            ids, finish = ids[:s.max_tokens], FinishReason.LENGTH
            text = self.tokenizer.decode(list(ids))
        return Completion(ids, (-1.0,) * len(ids), text, finish, a.version if a else 0, a.lora_id if a else None)


class CannedEvaluator:
    """An `Evaluator` that answers every request with one verdict (no verifier: fast tests of the
    driver); `requests` holds what it was asked."""

    def __init__(self, verdict):
        self.verdict = verdict
        self.requests: list = []

    async def evaluate(self, request):
        self.requests.append(request)
        return self.verdict


def partial_verdict():
    """A correctness failure with 1 of 2 hidden cases passed: partial credit."""
    from kgym.contract import CaseResult, Gate, Verdict

    return Verdict(passed=False, gate=Gate.CORRECTNESS, reason="case b differs",
                   cases=[CaseResult("a", True), CaseResult("b", False)], launches=1)
