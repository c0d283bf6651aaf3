"""Driving episodes with a policy: `rollout` runs one episode, `rollout_group` the G answers of a group.

A policy is any callable from the conversation so far (a list of chat messages) to the assistant's
next message (a dict in OpenAI form, or plain text): a vLLM client, a TRL generation, or a scripted
list of answers in the tests. Does not batch generation across episodes (a trainer does that by
stepping many `KernelEnv`s) and does not post-process the group's rewards (`group.py`).
"""

from __future__ import annotations

from typing import Any, Callable

from kgym.episodes.env import EpisodeConfig, KernelEnv
from kgym.episodes.evaluate import Evaluator
from kgym.episodes.result import EpisodeResult
from kgym.tasks.task import Task

Policy = Callable[[list[dict[str, Any]]], "dict[str, Any] | str"]


def rollout(env: KernelEnv, task: Task, policy: Policy, mode: str = "repair", *, episode_id: str | None = None,
            group_id: str | None = None, sample_index: int = 0) -> EpisodeResult:
    env.reset(task, mode, episode_id=episode_id, group_id=group_id, sample_index=sample_index)
    while not env.done:
        env.step(policy(list(env.messages)))
    return env.result()


def rollout_group(evaluator: Evaluator, task: Task, policies: list[Policy], mode: str, group_id: str,
                  config: EpisodeConfig = EpisodeConfig()) -> list[EpisodeResult]:
    """One episode per policy (the G answers of one group), sample index = position."""
    env = KernelEnv(evaluator, config)
    return [rollout(env, task, p, mode, episode_id=f"{group_id}-{i}", group_id=group_id, sample_index=i)
            for i, p in enumerate(policies)]
