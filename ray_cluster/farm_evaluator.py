"""`FarmEvaluator`: the `kgym.episodes.evaluator.Evaluator` protocol over the farm service, so an
episode's `submit_kernel` awaits a verdict from the GPU workers instead of verifying in-process.

    evaluator = FarmEvaluator(pool)            # a VerifierPool, a FarmService handle, or its actor name
    verdict = await evaluator.evaluate(request)

Many episodes of one process (or of many actors, each with the handle) await at once; the service
queues them behind its workers, verifies each evaluation id once and streams its row to the sink
when it has one. A failure of the farm (it gave up, or the service itself is gone) comes back as a
verdict with `error` set, never as an exception: to the episode that is kgym's failure, not the
candidate's. Does not cache, score or build requests (kgym.episodes does).
"""

from __future__ import annotations

from typing import Any

import ray
from ray.exceptions import RayError

from kgym.contract import EvalRequest, EvalResult, Verdict


class FarmEvaluator:
    def __init__(self, pool: Any):
        if isinstance(pool, str):
            pool = ray.get_actor(pool)
        self.handle = getattr(pool, "handle", pool)  # a VerifierPool client, or the service's handle
        self.calls = 0

    async def evaluate_result(self, request: EvalRequest) -> EvalResult | None:
        """The farm's whole result (worker, attempts, timings); None when the service is gone."""
        self.calls += 1
        try:
            return await self.handle.submit.remote(request)
        except RayError:
            return None

    async def evaluate(self, request: EvalRequest) -> Verdict:
        self.calls += 1
        try:
            result: EvalResult = await self.handle.submit.remote(request)
        except RayError as e:  # the service actor died or was stopped
            return Verdict(error=f"the farm service failed: {type(e).__name__}: {str(e)[:1500]}")
        return result.verdict
