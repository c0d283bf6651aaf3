"""`Evaluator`: a verifier plus deterministic evaluation ids and a verdict cache, for episodes.

An evaluation id is the one `kgym.records` stores (`records.ids.evaluation_id` over the whole task
spec, the candidate source, the task's seed and the verifier version), so a row written later
for the same evaluation carries the same id. The same answer submitted twice (in one episode or by
two answers of a group) is verified once: verdicts are cached by id, least recently used dropped
first. A verdict with `error` set (a failure of kgym, not of the candidate) is never cached, so a
resubmission retries it. Does not score: rewards are `kgym.reward`'s.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from kgym.contract import evaluation_id
from kgym.tasks.task import Task
from kgym.contract import Verdict


def evaluation_id_for(task: Task, source: str) -> str:
    return evaluation_id(task.spec.to_dict(), source, task.spec.seed)


class Evaluator:
    """Verifies candidates of tasks through `verifier` (a `kgym.verify.Verifier` or anything with the
    same `verify(reference, candidate, **overrides) -> Verdict`), caching verdicts by evaluation id."""

    def __init__(self, verifier: Any, *, max_cached: int = 4096):
        self.verifier = verifier
        self.max_cached = max_cached
        self._cache: OrderedDict[str, Verdict] = OrderedDict()
        self.verified = 0  # verifier calls made (cache misses)

    def evaluate(self, task: Task, source: str) -> tuple[str, Verdict, bool]:
        """(evaluation id, verdict, whether it came from the cache)."""
        eid = evaluation_id_for(task, source)
        hit = self._cache.get(eid)
        if hit is not None:
            self._cache.move_to_end(eid)
            return eid, hit, True
        verdict = self.verifier.verify(task.reference, source, **task.verify_options())
        self.verified += 1
        if verdict.error is None:
            self._cache[eid] = verdict
            while len(self._cache) > self.max_cached:
                self._cache.popitem(last=False)
        return eid, verdict, False
