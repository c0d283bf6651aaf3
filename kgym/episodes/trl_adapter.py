"""kgym for TRL's `GRPOTrainer` (TRL 1.16): a dataset of tasks, a reward function, tool environments.

    from kgym.episodes.trl_adapter import KgymReward, build_dataset, environment_factories
    dataset = build_dataset(tasks, mix=ModeMix())          # prompt (chat messages) + task columns
    reward = KgymReward(CachedEvaluator(LocalEvaluator(verifier)))
    GRPOTrainer(model, reward_funcs=reward, train_dataset=dataset, args=GRPOConfig(...),
                environment_factory=environment_factories(reward.evaluator))   # repair rows only

What TRL 1.16 provides and this module uses (read from its `GRPOTrainer`):
- `reward_funcs`: called as `f(prompts=..., completions=..., completion_ids=..., **columns,
  trainer_state=..., log_extra=..., log_metric=..., [environments=...])`, one list entry per
  completion; a `None` entry means "not this function's sample". `KgymReward` scores single-turn
  rows from the completion text and repair rows from their environment's state, then applies the
  group post-processing (loose credit when the whole group fails) over each run of consecutive
  completions of one task, which is how GRPO lays out a prompt's generations.
- `environment_factory`: a callable (or a dict name -> callable, selected by an `environment`
  column) returning an object with `reset(**row)` and public methods that become tools (their type
  hints and Google-style docstrings are the schemas). `KgymToolEnv` exposes `submit_kernel`,
  `inspect_evaluation` and `finalize` with kgym's limits; `SingleTurnEnv` exposes none, so
  single-turn rows render without tools. TRL bounds tool rounds with `max_tool_calling_iterations`;
  kgym also counts every tool call against `EpisodeConfig.max_turns`.
TRL calls tools and reward functions synchronously, while kgym's tools and scoring are coroutines
(they await the evaluator): `KgymToolEnv` and `KgymReward` each own a private event loop
(`sync.SyncRunner`) and run one coroutine to completion per call. The reward function gathers the
single-turn answers of a batch on that loop, so a farm evaluator verifies them concurrently.
Nothing here imports TRL; `build_dataset` imports `datasets` (the `rl` extra).
Does not train or generate; examples/trl_grpo_tiny.py shows a run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Sequence
from typing import Any

from kgym.contract import EndReason, Mode, Verdict
from kgym.episodes.env import EpisodeConfig
from kgym.episodes.evaluator import Evaluator
from kgym.episodes.mix import ModeMix
from kgym.episodes.single import SingleTurnScore, score_answer
from kgym.episodes.sync import SyncRunner
from kgym.episodes.tools import RepairTools, ToolCall
from kgym.reward import RewardConfig, group_rewards
from kgym.tasks.prompts import repair_messages
from kgym.tasks.registry import make_from_spec
from kgym.tasks.spec import TaskSpec
from kgym.tasks.task import Task

# End states of a TRL repair row that are no EndReason: TRL ended the rollout (the model stopped
# calling tools, or max_tool_calling_iterations) before finalize; or the row had no episode.
UNFINISHED = "unfinished"
NO_EPISODE = "no_episode"


# ---------------------------------------------------------------------------------------------
# The dataset
def task_row(task: Task, mode: Mode | str = Mode.SINGLE, config: EpisodeConfig = EpisodeConfig()) -> dict[str, Any]:
    """One dataset row: `prompt` as chat messages, the spec as JSON (`task_spec`), and plain columns."""
    if mode == Mode.SINGLE:
        prompt = [{"role": "user", "content": task.prompt()}]
    elif mode == Mode.REPAIR:
        prompt = repair_messages(task, config.max_submissions)
    else:
        raise ValueError(f"mode must be one of {', '.join(Mode)}, not {mode!r}")
    # plain strings: datasets stores columns as Arrow strings
    return {"prompt": prompt, "task_spec": task.spec.to_json(), "task_id": task.task_id,
            "family": task.spec.family, "stage": task.spec.stage, "mode": str(mode), "environment": str(mode)}


def task_rows(tasks: Iterable[Task], mode: Mode | str | None = Mode.SINGLE, mix: ModeMix | None = None,
              config: EpisodeConfig = EpisodeConfig()) -> list[dict[str, Any]]:
    """Rows for `tasks`; with `mix`, each row's mode is drawn from the mix by its spec key."""
    rows = []
    for i, t in enumerate(tasks):
        m = mix.mode(f"{t.spec.key}-{i}") if mix is not None else mode
        rows.append(task_row(t, m or Mode.SINGLE, config))
    return rows


def build_dataset(tasks: Iterable[Task], mode: Mode | str | None = Mode.SINGLE, mix: ModeMix | None = None,
                  config: EpisodeConfig = EpisodeConfig()):
    """A `datasets.Dataset` of `task_rows` (conversational prompts, as GRPOTrainer takes them)."""
    from datasets import Dataset

    return Dataset.from_list(task_rows(tasks, mode, mix, config))


def task_of(task_spec: str | dict[str, Any]) -> Task:
    spec = json.loads(task_spec) if isinstance(task_spec, str) else dict(task_spec)
    return make_from_spec(TaskSpec.from_dict(spec))


# ---------------------------------------------------------------------------------------------
# Repair and single-turn environments for `environment_factory`
class KgymToolEnv:
    """One repair episode for TRL's tool loop. Its public methods other than `reset` are the tools:
    plain functions (TRL's), each running the async tool to completion on this object's own loop."""

    def __init__(self, evaluator: Evaluator, config: EpisodeConfig = EpisodeConfig()):
        self._evaluator = evaluator
        self._config = config
        self._tools: RepairTools | None = None
        self._calls = 0
        self._sync = SyncRunner()

    def reset(self, **row: Any) -> None:
        """Start the episode of a dataset row (its `task_spec`); the prompt comes from the row."""
        self._calls = 0
        self._tools = None
        if row.get("mode", Mode.REPAIR) != Mode.REPAIR:
            return None
        cfg = self._config
        self._tools = RepairTools(self._evaluator, task_of(row["task_spec"]), max_submissions=cfg.max_submissions,
                                  inspect_token_budget=cfg.inspect_token_budget, reward_config=cfg.reward)
        return None

    def _run(self, name: str, **arguments: str) -> str:
        if self._tools is None:
            return "error: this episode has no tools (single-turn)"
        self._calls += 1
        if self._calls > self._config.max_turns:
            return f"error: turn limit ({self._config.max_turns}) reached; the last submission will be scored"
        return self._sync.run(self._tools.call(ToolCall(f"trl-{self._calls}", name, arguments), self._calls)).content

    def submit_kernel(self, code: str) -> str:
        """Submit a complete answer (a Python module defining ModelNew with Triton kernels) for verification.

        Args:
            code: the full Python source of the answer

        Returns:
            The evaluation id and a short status.
        """
        return self._run("submit_kernel", code=code)

    def inspect_evaluation(self, evaluation_id: str) -> str:
        """Show the details of an evaluation: the first failing gate, the compiler traceback, the mismatching
        hidden case and a summary of the difference, or the timings.

        Args:
            evaluation_id: an id returned by submit_kernel

        Returns:
            The details, trimmed to a token budget.
        """
        return self._run("inspect_evaluation", evaluation_id=evaluation_id)

    def finalize(self, evaluation_id: str) -> str:
        """End the episode; the reward is that of the given evaluation.

        Args:
            evaluation_id: the evaluation to be scored

        Returns:
            The reward of the finalized evaluation.
        """
        return self._run("finalize", evaluation_id=evaluation_id)

    def _outcome(self) -> tuple[float, Verdict | None, int, str]:
        """(reward, the verdict it rests on, submissions, end reason) of the episode so far."""
        t = self._tools
        if t is None:
            return 0.0, None, 0, NO_EPISODE
        if t.finalized is not None:
            return t.episode_reward(t.finalized), t.finalized.verdict, t.submissions, EndReason.FINALIZED
        if t.done:
            return 0.0, None, 0, EndReason.NO_SUBMISSION
        if t.evaluations and self._config.score_unfinished:
            last = t.last_scorable
            return t.episode_reward(last), last.verdict, t.submissions, UNFINISHED
        return 0.0, None, t.submissions, UNFINISHED


class SingleTurnEnv:
    """A tool-less environment for the single-turn rows of a mixed run (`environment` = "single")."""

    def reset(self, **row: Any) -> None:
        return None


def environment_factories(evaluator: Evaluator, config: EpisodeConfig = EpisodeConfig()) -> dict[str, Any]:
    """`environment_factory` for GRPOTrainer, keyed by the dataset's `environment` column."""
    return {str(Mode.SINGLE): SingleTurnEnv, str(Mode.REPAIR): lambda: KgymToolEnv(evaluator, config)}


# ---------------------------------------------------------------------------------------------
# The reward function
def completion_text(completion: Any) -> str | None:
    """The final assistant text of a completion: a string, or a list of chat messages (conversational)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        for msg in reversed(completion):
            if isinstance(msg, dict) and msg.get("role", "assistant") == "assistant":
                content = msg.get("content")
                if isinstance(content, list):  # content parts
                    content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
                return content if isinstance(content, str) else None
    return None


def _runs(keys: Sequence[str]) -> list[list[int]]:
    groups: list[list[int]] = []
    for i, k in enumerate(keys):
        if groups and keys[groups[-1][0]] == k:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


class KgymReward:
    """A GRPOTrainer reward function backed by the kgym verifier.

    Single-turn rows: the last fenced Python block of the completion is verified and scored; repair
    rows: the reward of their `KgymToolEnv` (finalized or last submission, churn included). Then each
    run of consecutive completions of one task is post-processed as a group (`kgym.reward.group_rewards`).
    `last` keeps the latest batch's per-completion details (end reason, reason, evaluation id)."""

    __name__ = "kgym"  # TRL names reward columns after the function

    def __init__(self, evaluator: Evaluator, reward_config: RewardConfig = RewardConfig(), *,
                 loose_credit: bool = True):
        self.evaluator = evaluator
        self.reward_config = reward_config
        self.loose_credit = loose_credit
        self.last: list[dict[str, Any]] = []
        self._sync = SyncRunner()

    async def _score_all(self, jobs: list[tuple[Task, str | None]]) -> list[SingleTurnScore]:
        return list(await asyncio.gather(*(score_answer(self.evaluator, t, text, self.reward_config)
                                           for t, text in jobs)))

    def __call__(self, prompts: list[Any], completions: list[Any], task_spec: list[str], mode: list[str] | None = None,
                 environments: list[Any] | None = None, log_metric: Any = None, log_extra: Any = None,
                 **kwargs: Any) -> list[float | None]:
        n = len(completions)
        modes = list(mode) if mode is not None else [Mode.SINGLE] * n
        base: list[float] = [0.0] * n
        verdicts: list[Verdict] = [Verdict() for _ in range(n)]
        subs = [1] * n
        errors = [False] * n
        details: list[dict[str, Any]] = [{} for _ in range(n)]
        tasks: dict[str, Task] = {}
        single: list[int] = []
        for i in range(n):
            spec = task_spec[i]
            if modes[i] == Mode.REPAIR and environments is not None and isinstance(environments[i], KgymToolEnv):
                r, v, s, end = environments[i]._outcome()
                base[i], subs[i] = r, max(1, s)
                if v is not None:
                    verdicts[i], errors[i] = v, v.error is not None
                details[i] = {"end_reason": end, "reason": "", "evaluation_id": None}
                continue
            if spec not in tasks:
                tasks[spec] = task_of(spec)
            single.append(i)
        scores = self._sync.run(self._score_all([(tasks[task_spec[i]], completion_text(completions[i]))
                                                 for i in single]))
        for i, score in zip(single, scores):
            base[i] = score.reward
            if score.evaluation is not None:
                verdicts[i] = score.evaluation.verdict
                errors[i] = verdicts[i].error is not None
            details[i] = {"end_reason": score.end_reason, "reason": score.reason,
                          "evaluation_id": score.evaluation.evaluation_id if score.evaluation else None}
        rewards = list(base)
        if self.loose_credit:
            for idx in _runs(list(task_spec)):
                with_loose = group_rewards([verdicts[i] for i in idx], self.reward_config, [subs[i] for i in idx])
                plain = group_rewards([verdicts[i] for i in idx], _no_loose(self.reward_config), [subs[i] for i in idx])
                for i, w, p in zip(idx, with_loose, plain):
                    if not errors[i]:
                        rewards[i] = base[i] + max(0.0, w - p)
        for d, r in zip(details, rewards):
            d["reward"] = r
        self.last = details
        if log_metric is not None and n:
            log_metric("kgym/solved", sum(1 for v in verdicts if v.passed) / n)
            log_metric("kgym/no_code", sum(1 for d in details if d["end_reason"] in (EndReason.NO_CODE,
                                                                                    EndReason.TRUNCATED)) / n)
        if log_extra is not None:
            log_extra("kgym_end", [d["end_reason"] for d in details])
        return [None if e else r for r, e in zip(rewards, errors)]


def _no_loose(cfg: RewardConfig) -> RewardConfig:
    from dataclasses import replace

    return replace(cfg, loose_weight=0.0)
