"""Single-turn scoring: one answer text -> extraction -> verification -> reward.

The benchmark's format: the model answers the single-turn prompt once; the last fenced Python block
is the candidate (`extract.py`'s rules). No usable block scores 0 with the extraction's reason and
verifies nothing. Used by `KernelEnv` in single mode and by the TRL reward function. Does not build
prompts (`kgym.tasks.prompts`) or post-process groups (`group.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kgym.episodes.evaluate import Evaluator
from kgym.episodes.extract import Extraction, extract_code
from kgym.episodes.feedback import status_text
from kgym.episodes.result import Evaluation
from kgym.reward import RewardConfig, reward
from kgym.tasks.task import Task


@dataclass(frozen=True)
class SingleTurnScore:
    extraction: Extraction
    evaluation: Evaluation | None  # None when there was no code to verify
    reward: float
    reason: str

    @property
    def end_reason(self) -> str:
        return {"ok": "answered", "no_block": "no_code", "truncated": "truncated"}[self.extraction.kind]


def score_answer(evaluator: Evaluator, task: Task, answer: str | None,
                 reward_config: RewardConfig = RewardConfig(), turn: int = 1) -> SingleTurnScore:
    ext = extract_code(answer)
    if not ext.ok:
        return SingleTurnScore(ext, None, 0.0, ext.reason)
    assert ext.code is not None
    eid, verdict, cached = evaluator.evaluate(task, ext.code)
    r = reward(verdict, reward_config) if verdict.error is None else 0.0
    ev = Evaluation(eid, turn, 1, ext.code, verdict, r, cached)
    return SingleTurnScore(ext, ev, r, status_text(verdict))
