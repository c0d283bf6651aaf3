"""The `Evaluator` protocol: how an episode gets a verdict for one `EvalRequest`, and its local form.

    from kgym.episodes.evaluator import Evaluator, LocalEvaluator
    verdict = await evaluator.evaluate(EvalRequest.for_task(task, code))

An evaluator is anything with `async def evaluate(request) -> Verdict`. The verdict is the
verifier's (no reward: `kgym.reward` scores it), with `error` set when kgym itself failed (never a
verdict on the candidate; the caller may retry). Two implementations:
- `LocalEvaluator(verifier)`: one `kgym.verify.Verifier` in this process. One Verifier is one
  sandbox, so its calls run one at a time, on one worker thread of its own, while the event loop
  keeps driving other episodes.
- the farm's, in `ray_cluster/` (it awaits the pool actor's `submit`); kgym never imports Ray.
The verdict cache by evaluation id is a wrapper any evaluator can take (`cache.py`).

This module imports neither torch nor Ray (the farm implements the protocol without kgym's heavy
imports). Does not build requests (`EvalRequest.for_task`), cache, or score.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, runtime_checkable

from kgym.contract import Episode, EvalRequest, Verdict
from kgym.contract.ids import source_hash


def episode_request(task: Any, code: str, episode: Episode | None = None) -> EvalRequest:
    """The request for one answer of an RL episode (single-turn or a repair submission): the task's,
    with the hidden cases salted by the answer's source hash (`VerifyConfig.case_salt`).
    Why: the verifier's secret is one per farm, so unsalted, every answer to a task met the same hidden
    inputs, and a repair turn's feedback (a failing value's got/want, each case's errors) told the next
    submission about them: a probe that wrote one input value into a failing output read it back in the
    note, and its second submission recognised the nominal case by that value and was right there alone,
    earning the nominal case's share (red team by class, 2026-12-07; tests/episodes/test_feedback_leak.py).
    With the salt, the same code meets the same inputs (a retry, a duplicate: one evaluation id, one
    verdict) and any other code fresh ones, so no verdict tells anything about the next one's inputs."""
    return EvalRequest.for_task(task, code, episode=episode, case_salt=episode_case_salt(code))


def episode_case_salt(code: str) -> str:
    """The hidden cases' salt of an episode's answer (`episode_request`): its source hash."""
    return source_hash(code)


@runtime_checkable
class Evaluator(Protocol):
    async def evaluate(self, request: EvalRequest) -> Verdict:
        """The verdict on `request.candidate` (the request's evaluation id names it)."""
        ...


class LocalEvaluator:
    """An `Evaluator` over one verifier (a `kgym.verify.Verifier`, or anything with its
    `verify(reference, candidate, *, seed, **overrides) -> Verdict`).

    Verification is blocking and takes seconds, so it runs off the event loop. All calls go to one
    thread owned by this evaluator, in submission order: one sandbox never sees two candidates at
    once, the verifier is only ever touched from one thread, and many waiting episodes do not use
    up the default executor's threads (as `asyncio.to_thread` behind a lock would). It is safe to
    call from several event loops (the TRL facade runs one per environment object). An exception
    out of the verifier is a failure of kgym, returned as a verdict with `error` set."""

    def __init__(self, verifier: Any):
        self.verifier = verifier
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgym-verify")
        self.calls = 0  # verifier calls made (only the worker thread writes it)

    def _verify(self, request: EvalRequest) -> Verdict:
        self.calls += 1
        try:
            return self.verifier.verify(request.reference, request.candidate, seed=request.seed,
                                        **dict(request.overrides))
        except Exception as e:  # the verifier turns every candidate failure into a verdict: this is kgym's
            return Verdict(error=f"{type(e).__name__}: {e}"[:2000])

    async def evaluate(self, request: EvalRequest) -> Verdict:
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._verify, request)

    def close(self) -> None:
        """Stop the worker thread once queued calls are done (the verifier is the caller's to close)."""
        self._executor.shutdown(wait=True)
