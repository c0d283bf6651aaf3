"""Episode results as plain data: one `Evaluation` per submitted answer, one `EpisodeResult` per episode.

These are what a records writer stores and a trainer reads: ids (episode, group, sample index,
evaluation ids), turns, rewards, the end reason and the transcript (chat messages in OpenAI form).
`EpisodeResult.records()` flattens the evaluations into `kgym.records.make_record` rows with their
episode coordinates. Does not run episodes (`env.py`) or post-process groups (`group.py`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from kgym.contract import Verdict

MODES = ("single", "repair")
# Why an episode ended. answered: a single-turn answer was verified; no_code / truncated: a single-turn
# answer had no usable block (extract.py); finalized: finalize(id) in repair mode; no_submission:
# finalize before any submission; turn_limit: the turn limit ended a repair episode.
END_REASONS = ("answered", "no_code", "truncated", "finalized", "no_submission", "turn_limit")


@dataclass(frozen=True)
class Evaluation:
    """One verified answer inside an episode."""

    evaluation_id: str
    turn: int  # the assistant turn (1-based) that submitted it
    submission: int  # 1-based index among the episode's submissions
    candidate: str
    verdict: Verdict
    reward: float  # the verdict's own reward, before churn and group post-processing
    cached: bool = False  # the verdict came from the evaluator's cache


@dataclass
class EpisodeResult:
    episode_id: str
    group_id: str
    sample_index: int
    task_id: str
    task: dict[str, Any]  # the TaskSpec as a dict
    mode: str  # one of MODES
    end_reason: str  # one of END_REASONS
    turns: int  # assistant messages taken
    submissions: int  # answers sent to the verifier (repair: submit_kernel calls accepted; single: 0 or 1)
    evaluations: list[Evaluation] = field(default_factory=list)
    final_evaluation_id: str | None = None  # the evaluation the reward is based on
    base_reward: float = 0.0  # reward(final verdict, submissions) with churn; 0 with no final evaluation
    reward: float = 0.0  # base_reward plus group post-processing (loose credit) once scored in a group
    loose_credit: float = 0.0
    reason: str = ""  # one line: why it ended so (extraction reason, final status, limit)
    error: str | None = None  # the final evaluation failed inside kgym: drop the episode, do not train on it
    transcript: list[dict[str, Any]] = field(default_factory=list)

    @property
    def final(self) -> Evaluation | None:
        return next((e for e in self.evaluations if e.evaluation_id == self.final_evaluation_id), None)

    @property
    def evaluation_ids(self) -> list[str]:
        return [e.evaluation_id for e in self.evaluations]

    @property
    def solved(self) -> bool:
        f = self.final
        return f is not None and f.verdict.passed

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def records(self) -> list[dict[str, Any]]:
        """One `kgym.records.make_record` row per evaluation (reward: the evaluation's own, except the
        final one, which carries the episode's reward)."""
        from kgym.contract import Episode
        from kgym.records.record import make_record

        task = self.task
        rows = []
        for e in self.evaluations:
            r = self.reward if e.evaluation_id == self.final_evaluation_id else e.reward
            rows.append(make_record(task=task, candidate_source=e.candidate, verdict=e.verdict, reward=r,
                                    episode=Episode(self.group_id, self.sample_index, e.turn)))
        return rows
