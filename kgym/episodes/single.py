"""Single-turn scoring: one answer text -> extraction -> verification -> reward.

The benchmark's format: the model answers the single-turn prompt once; the last fenced Python block
is the candidate (`kgym.answers`' rules). No usable block scores 0 with the extraction's reason and
verifies nothing. Used by `KernelEnv` in single mode and by the TRL reward function. Does not build
prompts (`kgym.tasks.prompts`) or post-process groups (`group.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kgym.answers import Extraction, ExtractionKind, extract_code
from kgym.contract import EndReason, Episode
from kgym.episodes.evaluator import Evaluator, episode_request
from kgym.episodes.feedback import status_text
from kgym.episodes.result import Evaluation
from kgym.reward import RewardConfig, reward
from kgym.tasks.task import Task

_END = {ExtractionKind.OK: EndReason.ANSWERED, ExtractionKind.NO_BLOCK: EndReason.NO_CODE,
        ExtractionKind.TRUNCATED: EndReason.TRUNCATED}


@dataclass(frozen=True)
class SingleTurnScore:
    extraction: Extraction
    evaluation: Evaluation | None  # None when there was no code to verify
    reward: float
    reason: str

    @property
    def end_reason(self) -> EndReason:
        return _END[self.extraction.kind]


async def score_answer(evaluator: Evaluator, task: Task, answer: str | None,
                       reward_config: RewardConfig = RewardConfig(), turn: int = 1,
                       episode: Episode | None = None) -> SingleTurnScore:
    """Extract, verify (awaiting `evaluator`) and score one answer; `episode` tags the request."""
    ext = extract_code(answer)
    if not ext.ok:
        return SingleTurnScore(ext, None, 0.0, ext.reason)
    assert ext.code is not None
    request = episode_request(task, ext.code, episode)
    verdict = await evaluator.evaluate(request)
    r = reward(verdict, reward_config) if verdict.error is None else 0.0
    ev = Evaluation(request.evaluation_id, turn, 1, ext.code, verdict, r)
    return SingleTurnScore(ext, ev, r, status_text(verdict))
