"""Episode results as plain data: one `Evaluation` per submitted answer, one `EpisodeResult` per episode.

These are what a records writer stores and a learner reads: ids (episode, group, sample index,
evaluation ids), turns, rewards, the mode and end reason (`kgym.contract.Mode` / `EndReason`), the
transcript (chat messages in OpenAI form), the reward config the episode was scored under and, per
assistant turn, the sampler's tokens when the policy gave them (`turn_tokens.TurnSample`).
`EpisodeResult.records()` flattens the evaluations into `kgym.records.make_record` rows with their
episode coordinates (`kgym.contract.Episode`). Does not run episodes (`env.py`), post-process
groups (`group.py`) or build learner samples (`flatten.py`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from kgym.contract import EndReason, Episode, Mode, Verdict
from kgym.episodes.turn_tokens import TurnSample
from kgym.reward import RewardConfig


@dataclass(frozen=True)
class Evaluation:
    """One verified answer inside an episode."""

    evaluation_id: str
    turn: int  # the assistant turn (1-based) that submitted it
    submission: int  # 1-based index among the episode's submissions
    candidate: str
    verdict: Verdict
    reward: float  # the verdict's own reward, before churn and group post-processing


def evaluation_named(evaluations: list[Evaluation], evaluation_id: str | None) -> Evaluation | None:
    """The evaluation an id names in an episode: one id can be submitted twice (the same code), and a
    kgym failure is retried under the same id, so the last one with a verdict, else the last one.
    Why: `final` took the first, so an episode that finalized the retry of an errored submission was
    read back as resting on the error (not solved, its group given loose credit beside its pass;
    red team, 2026-12-07), while its reward came from the retry."""
    return last_judged([e for e in evaluations if e.evaluation_id == evaluation_id])


def last_judged(evaluations: list[Evaluation]) -> Evaluation | None:
    """The last of `evaluations` with a verdict (kgym did not fail on it), else the last, else None."""
    judged = [e for e in evaluations if e.verdict.error is None]
    return (judged or evaluations or [None])[-1]


@dataclass
class EpisodeResult:
    episode_id: str
    group_id: str
    sample_index: int
    task_id: str
    task: dict[str, Any]  # the TaskSpec as a dict
    mode: Mode
    end_reason: EndReason | None  # None while the episode runs
    turns: int  # assistant messages taken
    submissions: int  # answers verified (repair: submit_kernel calls less those kgym failed on; single: 0 or 1)
    evaluations: list[Evaluation] = field(default_factory=list)
    final_evaluation_id: str | None = None  # the evaluation the reward is based on
    base_reward: float = 0.0  # reward(final verdict, submissions) with churn; 0 with no final evaluation
    reward: float = 0.0  # base_reward plus group post-processing (loose credit) once scored in a group
    loose_credit: float = 0.0
    reason: str = ""  # one line: why it ended so (extraction reason, final status, limit)
    error: str | None = None  # the final evaluation failed inside kgym: drop the episode, do not train on it
    transcript: list[dict[str, Any]] = field(default_factory=list)
    turn_samples: list[TurnSample | None] = field(default_factory=list)  # one per assistant turn
    reward_config: RewardConfig = field(default_factory=RewardConfig)  # what base_reward was scored under

    @property
    def final(self) -> Evaluation | None:
        return evaluation_named(self.evaluations, self.final_evaluation_id)

    @property
    def evaluation_ids(self) -> list[str]:
        return [e.evaluation_id for e in self.evaluations]

    @property
    def solved(self) -> bool:
        f = self.final
        return f is not None and f.verdict.passed

    @property
    def truncated(self) -> bool:
        """Ended by a limit (turn limit, an answer cut off), not by the model (Gymnasium's `truncated`)."""
        return self.end_reason is not None and self.end_reason.is_truncated()

    @property
    def terminated(self) -> bool:
        return self.end_reason is not None and self.end_reason.is_terminated()

    def episode(self, turn: int = 0) -> Episode:
        """This episode's coordinates in the contract's form, at `turn`."""
        return Episode(self.group_id, self.sample_index, turn)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def records(self, reward_config: RewardConfig | None = None) -> list[dict[str, Any]]:
        """One `kgym.records.make_record` row per evaluation, under `reward_config` (default: the
        episode's own): each row's `baseline` is the config's, its reward the verdict's under it,
        except the final evaluation's row, which carries the episode's reward (churn and group credit
        included). A config other than the one the episode was scored under is refused: the final
        row would carry a reward its `baseline` column does not describe."""
        from kgym.episodes.evaluator import episode_case_salt
        from kgym.records.record import make_record  # records pulls in pyarrow: only when rows are made

        cfg = self.reward_config if reward_config is None else reward_config
        if cfg != self.reward_config:
            raise ValueError(f"episode {self.episode_id} was scored under {self.reward_config}, not {cfg}: "
                             f"score it again under that config first")
        return [make_record(task=self.task, candidate_source=e.candidate, verdict=e.verdict, reward_config=cfg,
                            reward=self.reward if e.evaluation_id == self.final_evaluation_id else None,
                            episode=self.episode(e.turn), case_salt=episode_case_salt(e.candidate))
                for e in self.evaluations]
