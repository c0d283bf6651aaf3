"""Episodes: single-turn and multi-turn repair episodes, async, over any evaluator; groups of
answers; learner samples; a TRL adapter.

    from kgym.episodes import CachedEvaluator, EpisodeConfig, KernelEnv, LocalEvaluator
    env = KernelEnv(CachedEvaluator(LocalEvaluator(verifier)), EpisodeConfig(max_submissions=4))
    messages = await env.reset(task, Mode.REPAIR)    # system + user; tools: env.tools (OpenAI form)
    step = await env.step({"role": "assistant", "content": "", "tool_calls": [...]},
                          sample=TurnSample(prompt_ids, completion_ids, logprobs, policy_version=v))
    ...                                              # until step.terminated or step.truncated
    flatten_episode(env.result()).samples            # kgym.rl.batch.Sample for the learner

`evaluator.py` the Evaluator protocol and its local form, `cache.py` the verdict cache by id,
`budget.py` token estimates and trimming, `feedback.py` what the tools say about a verdict,
`tools.py` the three repair tools and their limits, `single.py` single-turn scoring, `turn_tokens.py`
a turn's sampler tokens, `env.py` reset/step, `rollouts.py` driving episodes with a policy,
`group.py` group post-processing, `flatten.py` episodes as learner samples, `mix.py` the
single/repair mix, `sync.py` a private event loop for synchronous callers, `trl_adapter.py` TRL's
reward function, environment and dataset (needs the `rl` extra). Code extraction is
`kgym.answers`. Names are imported on first use (PEP 562), so `kgym.episodes.evaluator` can be
imported without torch (tasks and the verifier need it); nothing here but `trl_adapter.py`
imports TRL, transformers or datasets. (No submodule shares a name with a function it exports:
once imported, a submodule is an attribute of the package and would shadow the function.)
"""

from __future__ import annotations

import importlib
from typing import Any

_NAMES = {
    "estimate_tokens": "budget", "tokenizer_counter": "budget", "trim_to_budget": "budget",
    "CachedEvaluator": "cache",
    "EpisodeConfig": "env", "KernelEnv": "env", "StepResult": "env",
    "Evaluator": "evaluator", "LocalEvaluator": "evaluator",
    "FlattenKind": "flatten", "Flattened": "flatten", "flatten_episode": "flatten",
    "GROUP_SIZE": "group", "GroupConfig": "group", "GroupResult": "group", "score_group": "group",
    "ModeMix": "mix",
    "EpisodeResult": "result", "Evaluation": "result",
    "act": "rollouts", "rollout": "rollouts", "rollout_group": "rollouts",
    "SingleTurnScore": "single", "score_answer": "single",
    "SyncRunner": "sync",
    "TurnSample": "turn_tokens",
    "TOOL_NAMES": "tools", "RepairTools": "tools", "ToolCall": "tools", "ToolResult": "tools",
    "parse_tool_call": "tools",
}
__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'kgym.episodes' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"kgym.episodes.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
