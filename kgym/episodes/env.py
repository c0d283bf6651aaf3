"""`KernelEnv`: a kgym episode as an async environment, `await reset(task, mode) -> observation` and
`await step(action, sample=None) -> StepResult(observation, reward, terminated, truncated, info)`,
with Gymnasium's semantics (OpenEnv's spirit: messages in, messages out).

Observations and actions are chat messages (role/content dicts; tool calls in OpenAI's
function-calling form), so vLLM's and TRL's chat templates apply unchanged:
- reset returns the opening messages: single mode (`Mode.SINGLE`) one user message
  (`task.prompt()`), repair mode the system and user messages of `task.repair_messages()`;
  `env.tools` are the tool schemas to render with them in repair mode (`kgym.tasks.prompts.TOOLS`).
- step takes the assistant's message (a dict, or its text) and, optionally, the sampler's tokens of
  that turn (`turn_tokens.TurnSample`; kept in `EpisodeResult.turn_samples` for the learner). Single
  mode: the answer is extracted, verified and scored, and the episode ends. Repair mode: every tool
  call of the message runs in order (`tools.py`) and each gets a `{"role": "tool", "tool_call_id",
  "name", "content"}` message; a message without tool calls gets a user message saying so.
  Malformed and unknown tool calls get an error in their tool message. Every assistant message is
  a turn, whatever it holds.
- Repair ends at finalize, or when the turn limit (`max_turns`, default 10) is reached: then the last
  submission is scored as if finalized (`score_unfinished=True`, churn included) or 0; the last one
  with a verdict, when kgym failed on later ones (`RepairTools.last_scorable`).
- `truncate(reason)` ends a running episode from outside by a limit only its driver sees (the
  engine's context: `EndReason.CONTEXT_LIMIT`), scored as the turn limit is.
- `terminated`: the model ended the episode (answered, no code, finalized, no submission);
  `truncated`: a limit did (the turn limit, the context, an answer cut off): `EndReason.is_truncated()`.
The reward is 0 on every step but the last. `result()` gives the `EpisodeResult`.

The async model: a step awaits the evaluator for each submission, so one process drives many
episodes at once (`asyncio.gather` over their steps or over `rollout`s) while the evaluator (one
local verifier, or the farm) works through their verifications. One env runs one episode, one step
at a time (a second concurrent step is refused); make one per concurrent episode (they may share
an evaluator). Does not generate text, batch episodes or post-process groups (`rollouts.py`, `group.py`).
"""

from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass
from typing import Any

from kgym.contract import EndReason, Mode
from kgym.episodes.budget import TokenCounter, estimate_tokens
from kgym.episodes.evaluator import Evaluator
from kgym.episodes.group import GROUP_SIZE
from kgym.episodes.mix import SINGLE_FRACTION, ModeMix
from kgym.episodes.result import EpisodeResult, Evaluation
from kgym.episodes.single import score_answer
from kgym.episodes.tools import RepairTools, parse_tool_call
from kgym.episodes.turn_tokens import TurnSample
from kgym.reward import RewardConfig
from kgym.settings import internal, option, section
from kgym.tasks.prompts import MAX_SUBMISSIONS, TOOLS, repair_messages
from kgym.tasks.task import Task


@dataclass(frozen=True)
class EpisodeConfig:
    """[episodes] of the RL job: a task's group of episodes, the single/repair mix, the repair limits and
    the reward's baseline (`reward`'s other terms are the study's, fixed here)."""

    group_size: int = option(GROUP_SIZE, "answers per task (the study: 8)", ge=2, le=256)
    single_fraction: float = option(SINGLE_FRACTION, "share of groups run single-turn; the rest repair (the study: "
                                    "25/75)", ge=0, le=1)
    mix_seed: int = option(0, "seed of the per-group mode draw (mix)", ge=0)
    max_submissions: int = option(MAX_SUBMISSIONS, "submit_kernel calls verified per repair episode (the study: up "
                                  "to four)", ge=1)
    max_turns: int = option(10, "assistant turns per repair episode", ge=1)
    reward: RewardConfig = section(RewardConfig, "how an episode is scored", inline=True)
    inspect_token_budget: int = internal(1024, "tokens of one inspect_evaluation answer")
    score_unfinished: bool = internal(True, "at the turn limit, score the last submission (else 0)")

    def __post_init__(self) -> None:
        if self.max_submissions < 1 or self.max_turns < 1 or self.inspect_token_budget < 16:
            raise ValueError("need max_submissions >= 1, max_turns >= 1, inspect_token_budget >= 16")
        if self.group_size < 1:
            raise ValueError("need group_size >= 1")

    @property
    def mix(self) -> ModeMix:
        """Which groups run single-turn (`single_fraction`, drawn with `mix_seed`)."""
        return ModeMix(self.single_fraction, self.mix_seed)


@dataclass(frozen=True)
class StepResult:
    observation: list[dict[str, Any]]  # messages to append after the assistant's
    reward: float
    terminated: bool  # the model ended the episode
    truncated: bool  # a limit ended it
    info: dict[str, Any]


def _as_message(action: dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(action, str):
        return {"role": "assistant", "content": action}
    if not isinstance(action, dict):
        return {"role": "assistant", "content": str(action)}
    return {**action, "role": "assistant"}


class KernelEnv:
    tools = TOOLS

    def __init__(self, evaluator: Evaluator, config: EpisodeConfig = EpisodeConfig(), *,
                 count_tokens: TokenCounter = estimate_tokens):
        self.evaluator = evaluator
        self.config = config
        self.count_tokens = count_tokens
        self._task: Task | None = None
        self._result: EpisodeResult | None = None
        self._tools: RepairTools | None = None
        self._stepping = False

    # ------------------------------------------------------------------------------------------
    async def reset(self, task: Task, mode: Mode | str = Mode.REPAIR, *, episode_id: str | None = None,
                    group_id: str | None = None, sample_index: int = 0) -> list[dict[str, Any]]:
        if mode not in tuple(Mode):
            raise ValueError(f"mode must be one of {', '.join(Mode)}, not {mode!r}")
        if self._stepping:
            raise RuntimeError("reset while a step is running")
        mode = Mode(mode)
        eid = episode_id or uuid.uuid4().hex[:16]
        gid = group_id or eid
        if mode is Mode.SINGLE:
            opening = [{"role": "user", "content": task.prompt()}]
            self._tools = None
        else:
            opening = repair_messages(task, self.config.max_submissions)
            self._tools = RepairTools(self.evaluator, task, max_submissions=self.config.max_submissions,
                                      inspect_token_budget=self.config.inspect_token_budget,
                                      count_tokens=self.count_tokens, reward_config=self.config.reward,
                                      group_id=gid, sample_index=sample_index)
        self._task = task
        self._result = EpisodeResult(episode_id=eid, group_id=gid, sample_index=sample_index,
                                     task_id=task.task_id, task=task.spec.to_dict(), mode=mode, end_reason=None,
                                     turns=0, submissions=0, transcript=copy.deepcopy(opening),
                                     reward_config=self.config.reward)
        return opening

    @property
    def done(self) -> bool:
        """The episode has ended (terminated or truncated), or none was started."""
        return self._result is None or self._result.end_reason is not None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation so far (opening, actions and observations)."""
        return self._need().transcript

    def result(self) -> EpisodeResult:
        r = self._need()
        if not self.done:
            raise RuntimeError("the episode is still running")
        return r

    def _need(self) -> EpisodeResult:
        if self._result is None:
            raise RuntimeError("call reset(task) first")
        return self._result

    # ------------------------------------------------------------------------------------------
    async def step(self, action: dict[str, Any] | str, sample: TurnSample | None = None) -> StepResult:
        r = self._need()
        if self.done:
            raise RuntimeError("the episode is over; call reset(task)")
        if self._stepping:
            raise RuntimeError("one step at a time: await the running step first (or use one env per episode)")
        self._stepping = True
        try:
            msg = _as_message(action)
            r.transcript.append(msg)
            r.turns += 1
            r.turn_samples.append(sample)
            if r.mode is Mode.SINGLE:
                return await self._single(r, msg)
            return await self._repair(r, msg)
        finally:
            self._stepping = False

    async def _single(self, r: EpisodeResult, msg: dict[str, Any]) -> StepResult:
        assert self._task is not None
        content = msg.get("content")
        score = await score_answer(self.evaluator, self._task, content if isinstance(content, str) else None,
                                   self.config.reward, turn=r.turns, episode=r.episode(r.turns))
        if score.evaluation is not None:
            r.evaluations.append(score.evaluation)
            r.submissions = 1
        return self._finish(r, score.end_reason, score.evaluation, score.reward, score.reason, [])

    async def _repair(self, r: EpisodeResult, msg: dict[str, Any]) -> StepResult:
        tools = self._tools
        assert tools is not None
        raw_calls = msg.get("tool_calls") or []
        obs: list[dict[str, Any]] = []
        errors = 0
        if not isinstance(raw_calls, list):
            raw_calls = [raw_calls]
        if not raw_calls:
            errors += 1
            obs.append({"role": "user", "content": "error: no tool call in your message. Call submit_kernel(code), "
                                                   "inspect_evaluation(evaluation_id) or finalize(evaluation_id)."})
        for i, raw in enumerate(raw_calls):
            call, problem = parse_tool_call(raw, default_id=f"call_{r.turns}_{i}")
            call_id = call.call_id if call else (raw.get("id") if isinstance(raw, dict) and raw.get("id")
                                                 else f"call_{r.turns}_{i}")
            name = call.name if call else _raw_name(raw)
            if call is None:
                errors += 1
                obs.append(_tool_message(call_id, name, f"error: {problem}"))
                continue
            if tools.done:
                obs.append(_tool_message(call_id, name, "error: the episode is over (finalize was called)"))
                continue
            out = await tools.call(call, r.turns)
            errors += int(out.error)
            obs.append(_tool_message(call_id, name, out.content))
        r.submissions = tools.submissions
        r.evaluations = list(tools.evaluations)
        r.transcript.extend(copy.deepcopy(obs))
        info = {"turn": r.turns, "errors": errors, "submissions": tools.submissions}
        if tools.done:
            ev = tools.finalized
            if ev is None:
                return self._finish(r, EndReason.NO_SUBMISSION, None, 0.0, "finalized without a submission", obs,
                                    info)
            return self._finish(r, EndReason.FINALIZED, ev, tools.episode_reward(ev),
                                f"finalized {ev.evaluation_id}", obs, info)
        if r.turns >= self.config.max_turns:
            why = f"turn limit ({self.config.max_turns}) reached without finalize"
            return self._end_unfinished(r, EndReason.TURN_LIMIT, why, obs, info)
        return StepResult(obs, 0.0, False, False, info)

    def truncate(self, reason: str, end: EndReason = EndReason.CONTEXT_LIMIT) -> StepResult:
        """End the running episode by a limit the env does not see itself (the engine's context: the
        next prompt would not fit), scored as the turn limit is: the last submission (churn included)
        when `score_unfinished`, else 0; a single-turn episode without an answer gets 0."""
        r = self._need()
        if self.done or self._stepping:
            raise RuntimeError("truncate needs a running episode between steps")
        if not end.is_truncated():
            raise ValueError(f"{end} is not a truncation")
        return self._end_unfinished(r, end, reason, [], {"turn": r.turns, "submissions": r.submissions})

    def _end_unfinished(self, r: EpisodeResult, end: EndReason, why: str, obs: list[dict[str, Any]],
                        info: dict[str, Any]) -> StepResult:
        tools = self._tools
        last = tools.last_scorable if tools is not None else None
        if last is None or not self.config.score_unfinished:
            return self._finish(r, end, None, 0.0, why, obs, info)
        return self._finish(r, end, last, tools.episode_reward(last),
                            f"{why}; scored the last submission {last.evaluation_id}", obs, info)

    def _finish(self, r: EpisodeResult, end: EndReason, ev: Evaluation | None, reward: float, reason: str,
                obs: list[dict[str, Any]], info: dict[str, Any] | None = None) -> StepResult:
        r.end_reason = end
        r.final_evaluation_id = ev.evaluation_id if ev else None
        r.base_reward = r.reward = reward
        r.reason = reason
        r.error = ev.verdict.error if ev is not None else None
        info = dict(info or {}, turn=r.turns, end_reason=end, evaluation_id=r.final_evaluation_id, reason=reason)
        return StepResult(obs, reward, end.is_terminated(), end.is_truncated(), info)


def _raw_name(raw: Any) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("function"), dict):
        name = raw["function"].get("name")
        if isinstance(name, str):
            return name[:80]
    return "unknown"


def _tool_message(call_id: str, name: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}
