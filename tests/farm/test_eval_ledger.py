"""The farm's book of evaluations without Ray (`kgym.farm.ledger.EvalLedger`, which the FarmService
actor wraps): an id is verified once however often it is asked for, and its callers share one
result; kept results are capped least recently asked first; calls go to the least-loaded workers up
to `max_in_flight` each; a farm failure goes back to the front of the queue until `max_attempts`,
then gives up with outcome error; a kernel's verdict is never retried; a second result for an id is
a duplicate. The same rules through Ray: tests/farm/test_service.py and test_pool.py."""

from __future__ import annotations

import asyncio

from kgym.contract import EvalRequest, Verdict, WorkerInfo, WorkerReply
from kgym.farm.ledger import EvalLedger, give_up_result
from kgym.farm.pool_stats import PoolStats


def _request(n: int) -> EvalRequest:
    return EvalRequest(task={"task_id": "relu-v1", "family": "elementwise"}, reference="ref", candidate=f"c{n}",
                       seed=n)


def _reply(request: EvalRequest, *, farm_error: bool = False) -> WorkerReply:
    verdict = Verdict(error="CUDA context lost") if farm_error else Verdict()
    return WorkerReply(evaluation_id=request.evaluation_id, verdict=verdict, worker=WorkerInfo(worker_id="w0"),
                       verify_s=0.5, started_at=1.0, finished_at=1.5)


def _ledger(**kw) -> EvalLedger:
    opts = {"max_attempts": 2, "max_in_flight": 2, "kept_results": 100, "stats": PoolStats(), **kw}
    return EvalLedger(**opts)


def test_one_id_asked_for_four_times_is_queued_once_and_answered_once():
    async def go():
        book = _ledger()
        req = _request(1)
        futures = [book.wait(req) for _ in range(3)]
        assert [queued for _, queued in futures] == [True, False, False]
        assert len({id(f) for f, _ in futures}) == 1 and book.queued == 1 and book.pending == 1
        [(worker, call)] = book.assign([("w0", 0)], now=10.0)
        assert (worker, call.attempt, call.submitted) == ("w0", 1, 10.0)
        result = book.answered(call, _reply(req), "w0", now=10.5)
        assert result is not None and result.latency_s == 0.5 and result.attempts == 1 and result.farm_error is None
        assert book.complete(result) is True
        assert futures[0][0].result() is result and book.pending == 0
        assert book.kept(req.evaluation_id) is result  # the fourth caller, after it finished
        assert book.complete(result) is False  # a second result for the id is dropped
        s = book.stats
        # duplicates: two callers while it was queued, one after, and the second result
        assert (s.submitted, s.completed, s.duplicates, s.retried, s.gave_up) == (1, 1, 4, 0, 0)

    asyncio.run(go())


def test_calls_go_to_the_least_loaded_workers_up_to_max_in_flight():
    async def go():
        book = _ledger(max_in_flight=2)
        for n in range(7):
            book.wait(_request(n))
        got = book.assign([("a", 1), ("b", 0), ("c", 2)], now=0.0)
        # b (empty) first and filled to 2, then a to 2; c is full; the rest wait in the queue
        assert [w for w, _ in got] == ["b", "b", "a"] and book.queued == 4
        assert [c.request.candidate for _, c in got] == ["c0", "c1", "c2"]
        assert book.assign([("a", 2), ("b", 2)], now=1.0) == []

    asyncio.run(go())


def test_a_farm_failure_is_retried_first_then_given_up():
    async def go():
        book = _ledger(max_attempts=2)
        first, second = _request(1), _request(2)
        fut, _ = book.wait(first)
        book.wait(second)
        [(_, call)] = book.assign([("w0", 1)], now=0.0)
        assert call.request is first
        assert book.answered(call, _reply(first, farm_error=True), "w0", now=1.0) is None
        assert book.queue[0] is call  # back at the front, ahead of the one that waited
        [(_, again)] = book.assign([("w1", 1)], now=2.0)
        assert again is call and call.attempt == 2 and book.stats.retried == 1
        result = book.answered(call, _reply(first, farm_error=True), "w1", now=3.0)
        assert result is not None and result.attempts == 2
        assert "w0: " in result.farm_error and "w1: " in result.farm_error
        assert book.stats.gave_up == 1
        book.complete(result)
        assert fut.result().outcome == "error"

    asyncio.run(go())


def test_a_retry_waits_for_another_worker_than_the_one_that_failed_it():
    # A broken worker answers at once and is idle first; its own failed call must not go back to it
    # while another worker is live (the retry waits), but other calls still may.
    async def go():
        book = _ledger(max_attempts=3)
        failed, other = _request(1), _request(2)
        book.wait(failed)
        book.wait(other)
        [(_, call)] = book.assign([("bad", 1), ("good", 2)], now=0.0)
        assert book.answered(call, _reply(failed, farm_error=True), "bad", now=0.1) is None
        got = book.assign([("bad", 0), ("good", 2)], now=0.2)  # good is full: the retry waits
        assert [(w, c.request.candidate) for w, c in got] == [("bad", other.candidate)]
        assert book.queue[0] is call
        [(w, again)] = book.assign([("bad", 1), ("good", 1)], now=0.3)
        assert (w, again) == ("good", call) and call.attempt == 2
        # when every live worker has failed it, it may go to any of them
        assert book.answered(call, _reply(failed, farm_error=True), "good", now=0.4) is None
        [(w, _)] = book.assign([("bad", 1), ("good", 1)], now=0.5)
        assert w in {"bad", "good"} and call.attempt == 3

    asyncio.run(go())


def test_a_kernels_verdict_is_never_retried():
    async def go():
        book = _ledger(max_attempts=3)
        req = _request(1)
        book.wait(req)
        [(_, call)] = book.assign([("w0", 0)], now=0.0)
        crashed = WorkerReply(evaluation_id=req.evaluation_id, verdict=Verdict(gate="crash"), worker=WorkerInfo(),
                              verify_s=1.0, started_at=0.0, finished_at=1.0)
        result = book.answered(call, crashed, "w0", now=1.0)
        assert result is not None and result.attempts == 1 and book.queued == 0

    asyncio.run(go())


def test_a_lost_call_is_requeued_until_max_attempts():
    async def go():
        book = _ledger(max_attempts=2)
        req = _request(1)
        book.wait(req)
        [(_, call)] = book.assign([("w0", 0)], now=0.0)
        call.errors.append("w0: worker died")
        assert book.retry_or_give_up(call, now=1.0) is None and book.queue[0] is call
        [(_, call)] = book.assign([("w1", 0)], now=2.0)
        call.errors.append("w1: worker died")
        gave_up = book.retry_or_give_up(call, now=5.0)
        assert gave_up is not None and gave_up.latency_s == 3.0 and gave_up.attempts == 2
        assert gave_up.verdict.error.startswith("farm gave up after 2 attempt(s): w0: worker died; w1: worker died")

    asyncio.run(go())


def test_kept_results_are_capped_least_recently_asked_first():
    async def go():
        book = _ledger(kept_results=2, max_in_flight=3)
        reqs = [_request(n) for n in range(3)]
        for r in reqs:
            book.wait(r)
        calls = [call for _, call in book.assign([("w0", 0)], now=0.0)]
        book.complete(book.answered(calls[0], _reply(reqs[0]), "w0", now=1.0))
        book.complete(book.answered(calls[1], _reply(reqs[1]), "w0", now=1.0))
        assert book.kept(reqs[0].evaluation_id) is not None  # asked again: now the most recent
        book.complete(book.answered(calls[2], _reply(reqs[2]), "w0", now=1.0))
        assert book.stats.forgotten == 1
        assert book.kept(reqs[1].evaluation_id) is None  # dropped: a resubmission is verified again
        assert book.kept(reqs[0].evaluation_id) is not None and book.kept(reqs[2].evaluation_id) is not None
        fut, queued = book.wait(reqs[1])
        assert queued and not fut.done()

    asyncio.run(go())


def test_take_queued_empties_the_queue():
    async def go():
        book = _ledger()
        for n in range(3):
            book.wait(_request(n))
        calls = book.take_queued()
        assert [c.request.seed for c in calls] == [0, 1, 2] and book.queued == 0 and book.pending == 3
        closed = give_up_result(calls[0].request, 0, ["the farm closed"], 0.0)
        assert closed.outcome == "error" and closed.farm_error == "the farm closed"

    asyncio.run(go())
