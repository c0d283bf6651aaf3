"""`CachedEvaluator`: a verdict cache by evaluation id, around any `Evaluator`.

The evaluation id (`kgym.contract.evaluation_id`: task spec, candidate source, seed, verifier
version) is the one records store, so the same answer submitted twice, in one episode or by two
answers of a group, is verified once. Verdicts are kept least recently used first out. A verdict
with `error` set (a failure of kgym, not of the candidate) is never cached, so resubmitting
retries it. Two requests for one id in flight at once on one event loop share one verification.
Several loops of one thread may share a cache (the TRL facade's objects do); several threads may
not (its dict is not locked). Does not verify (the wrapped evaluator does) or score.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from kgym.contract import EvalRequest, Verdict
from kgym.episodes.evaluator import Evaluator

MAX_CACHED = 4096


class CachedEvaluator:
    """An `Evaluator` that asks `inner` only for evaluation ids it has no verdict for."""

    def __init__(self, inner: Evaluator, *, max_cached: int = MAX_CACHED):
        if max_cached < 1:
            raise ValueError("max_cached must be >= 1")
        self.inner = inner
        self.max_cached = max_cached
        self._cache: OrderedDict[str, Verdict] = OrderedDict()
        # id -> (its event loop, the verification in flight); a task belongs to one loop, so only
        # requests on that loop may share it (the TRL facade drives one loop per environment object)
        self._pending: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Task[Verdict]]] = {}
        self.verified = 0  # requests passed to `inner` (cache misses)
        self.hits = 0  # requests answered from the cache or by a verification already in flight

    def __contains__(self, evaluation_id: str) -> bool:
        return evaluation_id in self._cache

    def __len__(self) -> int:
        return len(self._cache)

    async def evaluate(self, request: EvalRequest) -> Verdict:
        eid = request.evaluation_id
        hit = self._cache.get(eid)
        if hit is not None:
            self._cache.move_to_end(eid)
            self.hits += 1
            return hit
        loop = asyncio.get_running_loop()
        pending = self._pending.get(eid)
        if pending is not None and pending[0] is loop:
            self.hits += 1
            return await asyncio.shield(pending[1])
        task = loop.create_task(self._miss(request))
        self._pending[eid] = (loop, task)
        # shield: a caller cancelled while waiting does not cancel the verification others share
        return await asyncio.shield(task)

    async def _miss(self, request: EvalRequest) -> Verdict:
        eid = request.evaluation_id
        try:
            self.verified += 1
            verdict = await self.inner.evaluate(request)
            if verdict.error is None:
                self._cache[eid] = verdict
                while len(self._cache) > self.max_cached:
                    self._cache.popitem(last=False)
            return verdict
        finally:
            if eid in self._pending and self._pending[eid][1] is asyncio.current_task():
                del self._pending[eid]
