"""Driving episodes with a policy: `rollout` runs one episode, `rollout_group` the G answers of a
group concurrently.

A policy is any callable from the conversation so far (a list of chat messages) to the assistant's
next message (a dict in OpenAI form, or plain text), or to `(message, TurnSample)` when it samples
tokens (the learner needs them: `turn_tokens.py`); it may be a coroutine function (a vLLM client
awaiting its engine) or a plain function (a scripted list of answers in the tests). Does not batch
generation across episodes (a sampler does that by serving many concurrent `rollout`s) and does
not post-process the group's rewards (`group.py`).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from kgym.contract import Mode
from kgym.episodes.env import EpisodeConfig, KernelEnv
from kgym.episodes.evaluator import Evaluator
from kgym.episodes.result import EpisodeResult
from kgym.episodes.turn_tokens import TurnSample
from kgym.tasks.task import Task

Message = dict[str, Any] | str
PolicyOutput = Message | tuple[Message, TurnSample]
Policy = Callable[[list[dict[str, Any]]], PolicyOutput | Awaitable[PolicyOutput]]


async def act(policy: Policy, messages: list[dict[str, Any]]) -> tuple[Message, TurnSample | None]:
    """The policy's next (message, sample), awaiting it when it is asynchronous."""
    out = policy(messages)
    if inspect.isawaitable(out):
        out = await out
    if isinstance(out, tuple):
        message, sample = out
        return message, sample
    return out, None


async def rollout(env: KernelEnv, task: Task, policy: Policy, mode: Mode | str = Mode.REPAIR, *,
                  episode_id: str | None = None, group_id: str | None = None,
                  sample_index: int = 0) -> EpisodeResult:
    await env.reset(task, mode, episode_id=episode_id, group_id=group_id, sample_index=sample_index)
    while not env.done:
        message, sample = await act(policy, list(env.messages))
        await env.step(message, sample=sample)
    return env.result()


async def rollout_group(evaluator: Evaluator, task: Task, policies: list[Policy], mode: Mode | str, group_id: str,
                        config: EpisodeConfig = EpisodeConfig()) -> list[EpisodeResult]:
    """One episode per policy (the G answers of one group), run concurrently, one env each;
    sample index = position."""
    return list(await asyncio.gather(*(
        rollout(KernelEnv(evaluator, config), task, p, mode, episode_id=f"{group_id}-{i}", group_id=group_id,
                sample_index=i) for i, p in enumerate(policies))))
