"""Many episodes, interleaved, over one engine: `await RolloutDriver(...).run_groups(tasks)`.

For each task a group of G episodes (G = `SamplingConfig.group_size`, default 8), its mode drawn
per group by `ModeMix` (25% single-turn, 75% repair) unless given. Every episode is a coroutine
that, turn by turn:
  1. builds the turn's prompt ids (`prompts.ChatPrompter`: turn 1 rendered with the repair tools,
     later turns = previous prompt + completion + the template's tokens for the tool messages);
  2. awaits one completion from the `GenerationBatcher` under the registry's latest policy version
     at that moment (so one engine call serves every episode that is ready, single and repair);
  3. parses tool calls from the text (`toolcalls.parse_tool_calls`; repair mode only: a single-turn
     answer is plain text whose last python fence is the candidate);
  4. `await env.step(message, sample=TurnSample(prompt, completion, sampler logprobs, policy_version))`,
     which verifies any submission through the evaluator while the other episodes generate;
until the env ends the episode (finalize, an answer, the turn limit). An episode whose generation
fails (engine error, a retired adapter) ends with `EpisodeRollout.error` set and no result: it is
the farm's failure, not the model's, and is never scored.

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

from kgym.contract import Mode
from kgym.episodes.env import EpisodeConfig, KernelEnv
from kgym.episodes.evaluator import Evaluator
from kgym.episodes.mix import ModeMix
from kgym.episodes.result import EpisodeResult
from kgym.episodes.tokens import TurnSample
from kgym.rollout.adapters import AdapterRegistry
from kgym.rollout.batcher import GenerationBatcher
from kgym.rollout.engine import FinishReason
from kgym.rollout.prompts import ChatPrompter
from kgym.rollout.sampling import RL_SAMPLING, SamplingConfig
from kgym.rollout.toolcalls import parse_tool_calls
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
                 mix: ModeMix | None = None):
        self.batcher = batcher
        self.evaluator = evaluator
        self.tokenizer = tokenizer
        self.registry = registry
        self.sampling = sampling
        self.episode = episode
        self.mix = mix or ModeMix()  # 25% single / 75% repair

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
        prompt = prompter.first(messages)
        turns: list[TurnRecord] = []
        while not env.done:
            turn = len(turns) + 1
            adapter = self.registry.latest
            seed = None if self.sampling.seed is None else self.sampling.seed + sample_index + 1000 * (turn - 1)
            t0 = time.perf_counter()
            try:
                out = await self.batcher.generate(prompt.ids, self.sampling, adapter, seed)
            except Exception as e:  # noqa: BLE001 - a generation failure is kgym's, recorded, never scored
                return EpisodeRollout(task.task_id, group_id, sample_index, mode, None, tuple(turns),
                                      f"generation failed on turn {turn}: {type(e).__name__}: {e}")
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
                prompt = prompter.next(prompt.ids, out.token_ids, through, step.observation)
        return EpisodeRollout(task.task_id, group_id, sample_index, mode, env.result(), tuple(turns))
