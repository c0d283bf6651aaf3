"""`EvalLedger`: the farm's book of evaluations, without Ray. It holds the queue of calls not yet
given to a worker, the evaluation ids someone waits on, and the results kept; it decides who gets a
call (backpressure), when a failed call is tried again and when the farm gives up, and that each
evaluation id is answered once.

Rules (the farm service, `ray_cluster/service.py`, wraps one ledger and makes the calls it decides):
- Exactly once: results are keyed by evaluation id. `kept(id)` answers an id that already has a
  result; `wait(request)` queues an id seen for the first time and hands every later caller of the
  same id the same future; `complete(result)` keeps a result once (a second one for the id is
  counted as a duplicate and dropped) and wakes its callers.
- The last `kept_results` results asked for are kept (least recently used dropped first,
  `PoolStats.forgotten`); an id resubmitted after its result was dropped is verified again.
- Backpressure: `assign(loads, now)` gives queued calls to workers least-loaded first, each up to
  `max_in_flight` calls; the rest wait in the queue.
- Retries first: a call that the farm failed (a dead worker, an exception, a reply whose verdict
  carries `error`) goes back to the front of the queue while it has made fewer than `max_attempts`
  calls; after that its result is `give_up_result` (outcome "error", never a verdict). A kernel's
  verdict (timeout and crash included) is never retried.
- Elsewhere: a retry is not given to a worker that already failed it while any other worker is
  live (it waits for one): a broken worker answers fast, so it would otherwise take its own retries
  before its health probe comes back and spend every attempt.

Counts go to the `PoolStats` it is given (submitted, retried, gave_up, duplicates, forgotten,
completed). Futures are asyncio's: every method runs on the owner's one event loop. Does not talk to
workers, place them, watch deadlines or write records.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from kgym.contract import EvalRequest, EvalResult, Verdict, WorkerReply
from kgym.farm.pool_stats import PoolStats

K = TypeVar("K", bound=Hashable)


@dataclass
class Call:
    """One evaluation on its way through the farm."""

    request: EvalRequest
    attempt: int = 0  # calls made so far (1 after the first dispatch)
    submitted: float = 0.0  # monotonic time of the latest dispatch
    errors: list[str] = field(default_factory=list)
    failed_on: set = field(default_factory=set)  # keys of the workers whose calls of it failed


def give_up_result(request: EvalRequest, attempts: int, errors: list[str], latency_s: float) -> EvalResult:
    """The one result of an evaluation the farm could not complete: outcome "error", never a verdict."""
    why = "; ".join(errors) or "the farm failed"
    verdict = Verdict(error=f"farm gave up after {attempts} attempt(s): {why}"[:8000])
    return EvalResult(request=request, verdict=verdict, worker=None, attempts=attempts, verify_s=None,
                      latency_s=latency_s, farm_error=why)


class EvalLedger:
    """Queue, waiters and kept results of one farm (rules in the module docstring)."""

    def __init__(self, *, max_attempts: int, max_in_flight: int, kept_results: int, stats: PoolStats):
        self.max_attempts = max_attempts
        self.max_in_flight = max_in_flight
        self.kept_results = kept_results
        self.stats = stats
        self.queue: collections.deque[Call] = collections.deque()
        self._waiting: dict[str, asyncio.Future] = {}  # id -> its result, while queued or running
        self._results: collections.OrderedDict[str, EvalResult] = collections.OrderedDict()  # LRU order

    # -- what callers see -----------------------------------------------------------------------
    @property
    def queued(self) -> int:
        """Calls waiting for a worker."""
        return len(self.queue)

    @property
    def pending(self) -> int:
        """Evaluation ids queued or running."""
        return len(self._waiting)

    def kept(self, evaluation_id: str) -> EvalResult | None:
        """The kept result of an id (now the most recently asked for), or None."""
        done = self._results.get(evaluation_id)
        if done is not None:
            self._results.move_to_end(evaluation_id)
            self.stats.duplicates += 1
        return done

    def wait(self, request: EvalRequest) -> tuple[asyncio.Future, bool]:
        """(the future of `request`'s result, True when it was queued now). An id already queued or
        running is not queued again: its callers share one verification."""
        eid = request.evaluation_id
        fut = self._waiting.get(eid)
        if fut is not None:
            self.stats.duplicates += 1
            return fut, False
        fut = asyncio.get_running_loop().create_future()
        self._waiting[eid] = fut
        self.queue.append(Call(request))
        return fut, True

    # -- workers get calls ----------------------------------------------------------------------
    def assign(self, loads: Sequence[tuple[K, int]], now: float) -> list[tuple[K, Call]]:
        """Queued calls for the workers given as (key, calls in flight), least-loaded first (so work
        spreads over every worker before any gets a second call), each filled up to `max_in_flight`;
        a call skips the workers that failed it while another live worker has not. The calls are
        stamped as dispatched (`attempt`, `submitted`) and counted."""
        out: list[tuple[K, Call]] = []
        live = {key for key, _ in loads}
        for key, load in sorted(loads, key=lambda kv: kv[1]):
            skipped: list[Call] = []
            while self.queue and load < self.max_in_flight:
                call = self.queue.popleft()
                if key in call.failed_on and not live <= call.failed_on:
                    skipped.append(call)
                    continue
                call.attempt += 1
                call.submitted = now
                load += 1
                self.stats.submitted += 1
                if call.attempt > 1:
                    self.stats.retried += 1
                out.append((key, call))
            self.queue.extendleft(reversed(skipped))
        return out

    # -- calls come back ------------------------------------------------------------------------
    def answered(self, call: Call, reply: WorkerReply, worker_id: str, now: float) -> EvalResult | None:
        """The result of a worker's reply, or None when the reply was the farm's failure and the call
        went back to the front of the queue."""
        if reply.farm_error is not None:
            self.failed(call, worker_id, reply.farm_error[-500:])
            if call.attempt < self.max_attempts:
                self.queue.appendleft(call)
                return None
            self.stats.gave_up += 1
        return EvalResult(request=call.request, verdict=reply.verdict, worker=reply.worker,
                          attempts=call.attempt, verify_s=reply.verify_s, latency_s=now - call.submitted,
                          started_at=reply.started_at, finished_at=reply.finished_at,
                          farm_error=None if reply.farm_error is None else "; ".join(call.errors))

    def failed(self, call: Call, worker: Hashable, why: str) -> None:
        """Note that `worker` failed `call` (the farm's failure): its error, and that its retry goes
        elsewhere while another worker is live."""
        call.errors.append(f"{worker}: {why}")
        call.failed_on.add(worker)

    def retry_or_give_up(self, call: Call, now: float) -> EvalResult | None:
        """A call the farm failed (its error already noted in `call.errors`): back to the front of the
        queue (None), or, after `max_attempts` calls, its give-up result."""
        if call.attempt < self.max_attempts:
            self.queue.appendleft(call)
            return None
        self.stats.gave_up += 1
        return give_up_result(call.request, call.attempt, call.errors, now - call.submitted)

    def take_queued(self) -> list[Call]:
        """Every queued call, removed from the queue (the farm closes, or has no worker left)."""
        calls = list(self.queue)
        self.queue.clear()
        return calls

    def complete(self, result: EvalResult) -> bool:
        """Keep `result` and wake its callers; False (a duplicate, dropped) when its id has one."""
        eid = result.evaluation_id
        if eid in self._results:
            self.stats.duplicates += 1
            return False
        self._results[eid] = result
        while len(self._results) > self.kept_results:
            self._results.popitem(last=False)
            self.stats.forgotten += 1
        self.stats.completed += 1
        fut = self._waiting.pop(eid, None)
        if fut is not None and not fut.done():
            fut.set_result(result)
        return True
