"""KernelBench answers from a model: the checkout's own prompts (byte-identical to the eval job's,
`kgym.kernelbench.build_prompts`) through vLLM, out as the generations JSONL that `kgym eval run`
reads (`kgym.kernelbench.generations`). The work behind `kgym eval generate`.

Protocol (the study's): each prompt is one user message rendered by the model's chat template with
thinking off, greedy decoding (temperature 0), at most 8192 new tokens (`EVAL_SAMPLING`). With
`samples > 1` each problem gets that many rows, sample k seeded with seed + k; a greedy multi-sample
run would repeat one answer, so the temperature then defaults to 1.0 (`default_sampling`). Rows
also carry the finish reason and token count, so a cut-off answer is visible in the file
(extraction already scores it 0). Written to a temporary name and renamed. Does not verify or score.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgym.kernelbench import Checkout, build_prompts
from kgym.rollout.adapters import PolicyAdapter
from kgym.rollout.sampling import EVAL_SAMPLING, SamplingConfig
from kgym.rollout.turn_prompts import ChatPrompter


def default_sampling(samples: int, temperature: float | None = None, max_tokens: int | None = None,
                     seed: int = 0, thinking: bool = False) -> SamplingConfig:
    t = temperature if temperature is not None else (0.0 if samples == 1 else 1.0)
    return EVAL_SAMPLING.replace(temperature=t, max_tokens=max_tokens or EVAL_SAMPLING.max_tokens, seed=seed,
                                 thinking=thinking)


@dataclass(frozen=True)
class GenerateSummary:
    path: str
    rows: int
    tokens: int
    seconds: float
    cut_off: int  # answers that hit max_tokens

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0


def generate_answers(engine: Any, checkout: Checkout, levels: list[int], out: str | Path, *, model_name: str,
                     sampling: SamplingConfig, samples: int = 1, ids: list[int] | None = None,
                     adapter: PolicyAdapter | None = None) -> GenerateSummary:
    import time

    rows = [r for level in levels for r in build_prompts(checkout, level, ids=ids, samples=samples,
                                                         seed=sampling.seed or 0)]
    prompter = ChatPrompter(engine.tokenizer, None, thinking=sampling.thinking)
    prompts = [prompter.first([{"role": "user", "content": r.prompt}]).ids for r in rows]
    seeds = [r.seed if r.seed is not None else sampling.seed for r in rows]
    t0 = time.perf_counter()
    outs = engine.generate(prompts, sampling, adapter, seeds=seeds)
    seconds = time.perf_counter() - t0
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tokens = cut = 0
    with open(tmp, "w") as f:
        for r, (c,) in zip(rows, outs):
            tokens += len(c.token_ids)
            cut += c.finish_reason == "length"
            f.write(json.dumps({"level": r.level, "problem_id": r.problem_id, "name": r.name, "model": model_name,
                                "sample": r.sample, "seed": r.seed, "answer": c.text,
                                "finish_reason": str(c.finish_reason), "completion_tokens": len(c.token_ids),
                                "policy_version": c.policy_version}) + "\n")
    os.replace(tmp, path)
    return GenerateSummary(str(path), len(rows), tokens, seconds, cut)
