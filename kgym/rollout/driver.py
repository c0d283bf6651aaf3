"""Many episodes, interleaved, over one engine: `await RolloutDriver(...).run_groups(tasks)`.

For each task a group of G episodes (G = `SamplingConfig.group_size`, default 8), its mode drawn
per group by `ModeMix` (25% single-turn, 75% repair) unless given. Every episode is a coroutine
that, turn by turn:
  1. builds the turn's prompt ids (`turn_prompts.ChatPrompter`: turn 1 rendered with the repair tools,
     later turns = previous prompt + completion + the template's tokens for the tool messages);
  2. awaits one completion from the `GenerationBatcher` under the registry's latest policy version
     at that moment (so one engine call serves every episode that is ready, single and repair);
  3. parses tool calls from the text (`toolcalls.parse_tool_calls`; repair mode only: a single-turn
     answer is plain text whose last python fence is the candidate);
  4. `await env.step(message, sample=TurnSample(prompt, completion, sampler logprobs, policy_version))`,
     which verifies any submission through the evaluator while the other episodes generate;
until the env ends the episode (finalize, an answer, the turn limit). Failures end one episode, never
the others of its batch or the job:
- a prompt that would outgrow the engine's context (`context_budget.ContextBudget`: the room left under
  `max_model_len` is below the minimum a turn needs) ends the episode as truncated
  (`EndReason.CONTEXT_LIMIT`, `KernelEnv.truncate`): counted and scored with what it has, as the
  turn limit is (the last submission, churn included), never an error. A turn with less room
  than `max_tokens` but enough to generate gets max_tokens capped to the room;
- a generation that fails (a request the engine refused, a retired adapter, a dead engine: the
  batcher isolates each request) or a first prompt the chat template cannot render (it raised, before
  the model wrote anything) ends the episode with `EpisodeRollout.error` set (the turn and the reason)
  and no result: kgym's failure, not the model's, never scored;
- a later prompt the template cannot render (it raised on the conversation after the model's own
  message: Llama 3.1's refuses two tool calls in one message) ends the episode as truncated
  (`EndReason.UNRENDERABLE`), scored as the turn limit is, never an error. Why: the model's text
  caused it, and an error drops the episode from training, so a failing episode could shed its
  negative reward by ending on a message its template refuses (red team, 2026-12-07).

Each turn also gets a `TurnRecord` (text, token counts, finish reason, policy version and LoRA id,
tool-call parse problems, latency): what the RL job's metrics and rollout Parquet need besides the
`EpisodeResult` (transcript, evaluations, reward, turn samples). Group post-processing
(`kgym.episodes.score_group`), advantages, staleness filtering and records are the RL job's; this
module never references that job. Seeds: with `SamplingConfig.seed = s`, episode k's turn t uses
s + k + 1000 * (t - 1), so a group's samples differ and a rerun repeats them.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from kgym.contract import EndReason, Mode
from kgym.episodes.env import EpisodeConfig, KernelEnv
from kgym.episodes.evaluator import Evaluator
from kgym.episodes.mix import ModeMix
from kgym.episodes.result import EpisodeResult
from kgym.episodes.turn_tokens import TurnSample
from kgym.rollout.adapters import AdapterRegistry
from kgym.rollout.batcher import GenerationBatcher
from kgym.rollout.context_budget import ContextBudget
from kgym.rollout.engine import FinishReason
from kgym.rollout.sampling import RL_SAMPLING, SamplingConfig
from kgym.rollout.toolcalls import parse_tool_calls
from kgym.rollout.turn_prompts import ChatPrompter
from kgym.tasks.prompts import TOOLS
from kgym.tasks.task import Task


@dataclass(frozen=True)
class TurnRecord:
    turn: int
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: FinishReason
    policy_version: int
    lora_id: int | None
    tool_calls: int
    tool_call_problems: tuple[str, ...]
    prompt_rebuilt: bool  # the template was re-rendered (turn 1, or not prefix-stable)
    seconds: float  # from the request to the completion (queue + engine)


@dataclass(frozen=True)
class EpisodeRollout:
    task_id: str
    group_id: str
    sample_index: int
    mode: Mode
    result: EpisodeResult | None  # None when `error` is set
    turns: tuple[TurnRecord, ...]
    error: str | None = None

    @property
    def policy_versions(self) -> tuple[int, ...]:
        return tuple(t.policy_version for t in self.turns)


@dataclass(frozen=True)
class GroupRollout:
    group_id: str
    task_id: str
    mode: Mode
    episodes: tuple[EpisodeRollout, ...]

    @property
    def results(self) -> list[EpisodeResult]:
        """The episodes that ran to an end (for `kgym.episodes.score_group`)."""
        return [e.result for e in self.episodes if e.result is not None]


class RolloutDriver:
    def __init__(self, batcher: GenerationBatcher, evaluator: Evaluator, tokenizer: Any, registry: AdapterRegistry,
                 *, sampling: SamplingConfig = RL_SAMPLING, episode: EpisodeConfig = EpisodeConfig(),
                 mix: ModeMix | None = None, context: ContextBudget | None = None):
        """`context`: the bound on prompts (default: the engine's `max_model_len`, when it has one,
        with `ContextBudget`'s default minimum room; none for an engine without one)."""
        self.batcher = batcher
        self.evaluator = evaluator
        self.tokenizer = tokenizer
        self.registry = registry
        self.sampling = sampling
        self.episode = episode
        self.mix = mix or ModeMix()  # 25% single / 75% repair
        limit = getattr(batcher.engine, "max_model_len", None)
        self.context = context if context is not None else (ContextBudget(limit) if isinstance(limit, int) else None)

    async def run_groups(self, tasks: list[Task], *, group_ids: list[str] | None = None,
                         modes: list[Mode | str] | None = None, group_size: int | None = None) -> list[GroupRollout]:
        """One group per task, all episodes of all groups interleaved; groups in the order of `tasks`."""
        g = group_size or self.sampling.group_size
        gids = group_ids or [f"{t.task_id}-{i}" for i, t in enumerate(tasks)]
        if len(gids) != len(tasks) or (modes is not None and len(modes) != len(tasks)):
            raise ValueError("one group id and mode per task")
        chosen = [Mode(m) for m in modes] if modes is not None else [self.mix.mode(gid) for gid in gids]
        coros = [self.run_episode(t, m, gid, k) for t, m, gid in zip(tasks, chosen, gids) for k in range(g)]
        done = await asyncio.gather(*coros)
        return [GroupRollout(gid, t.task_id, m, tuple(done[i * g:(i + 1) * g]))
                for i, (t, m, gid) in enumerate(zip(tasks, chosen, gids))]

    async def run_episode(self, task: Task, mode: Mode | str, group_id: str, sample_index: int) -> EpisodeRollout:
        mode = Mode(mode)
        env = KernelEnv(self.evaluator, self.episode)
        prompter = ChatPrompter(self.tokenizer, TOOLS if mode is Mode.REPAIR else None,
                                thinking=self.sampling.thinking)
        messages = await env.reset(task, mode, episode_id=f"{group_id}-{sample_index}", group_id=group_id,
                                   sample_index=sample_index)
        turns: list[TurnRecord] = []

        def failed(why: str) -> EpisodeRollout:
            return EpisodeRollout(task.task_id, group_id, sample_index, mode, None, tuple(turns), why)

        try:
            prompt = prompter.first(messages)
        except Exception as e:  # noqa: BLE001 - a template that raises ends this episode, not the job
            return failed(f"prompt of turn 1 could not be rendered: {type(e).__name__}: {e}")
        while not env.done:
            turn = len(turns) + 1
            sampling = self.sampling
            if self.context is not None:
                max_tokens = self.context.max_tokens(len(prompt.ids), sampling.max_tokens)
                if max_tokens == 0:
                    env.truncate(self.context.reason(turn, len(prompt.ids), sampling.max_tokens),
                                 EndReason.CONTEXT_LIMIT)
                    break
                if max_tokens < sampling.max_tokens:
                    sampling = sampling.replace(max_tokens=max_tokens)
            adapter = self.registry.latest
            seed = None if self.sampling.seed is None else self.sampling.seed + sample_index + 1000 * (turn - 1)
            t0 = time.perf_counter()
            try:
                out = await self.batcher.generate(prompt.ids, sampling, adapter, seed)
            except Exception as e:  # noqa: BLE001 - a generation failure is kgym's, recorded, never scored
                return failed(f"generation failed on turn {turn}: {type(e).__name__}: {e}")
            seconds = time.perf_counter() - t0
            if mode is Mode.REPAIR:
                parsed = parse_tool_calls(out.text, id_prefix=f"call_{turn}")
                message, ncalls, problems = parsed.message, len(parsed.tool_calls), tuple(parsed.problems)
            else:
                message, ncalls, problems = {"role": "assistant", "content": out.text}, 0, ()
            sample = TurnSample(prompt.ids, out.token_ids, out.logprobs, policy_version=out.policy_version)
            turns.append(TurnRecord(turn, out.text, len(prompt.ids), len(out.token_ids), out.finish_reason,
                                    out.policy_version, out.lora_id, ncalls, problems, prompt.rebuilt, seconds))
            step = await env.step(message, sample=sample)
            if not env.done:
                history = env.messages
                through = history[:len(history) - len(step.observation)]
                try:
                    prompt = prompter.next(prompt.ids, out.token_ids, through, step.observation)
                except Exception as e:  # noqa: BLE001 - the model's message did it: a scored limit (docstring)
                    env.truncate(f"prompt of turn {turn + 1} could not be rendered: {type(e).__name__}: "
                                 f"{str(e)[:500]}", EndReason.UNRENDERABLE)
                    break
        return EpisodeRollout(task.task_id, group_id, sample_index, mode, env.result(), tuple(turns))
