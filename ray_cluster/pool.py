"""`VerifierPool`: evaluations spread over verifier workers, results as they complete, nothing lost.

Covers placing workers (one per GPU with `num_gpus=1`; one per CPU slot where the cluster has no
GPU), feeding them with a bounded number of calls in flight per worker (backpressure: the input
iterator is read only when a worker has room), yielding results in completion order, and the farm's
failure handling:

- a worker that dies (`RayActorError`), stops answering within `call_timeout_s`, or fails its health
  probe is killed and replaced by a fresh one; its calls in flight go back to the queue;
- a reply whose verdict carries `error` (a failure of kgym, not of the kernel) is retried, up to
  `max_attempts` calls per evaluation; after that one result with outcome "error" is yielded;
- a kernel's verdict (timeout and crash included) is never retried;
- evaluation ids are de-duplicated: an id given twice, or listed in `skip`, is not run again, and
  each id is yielded at most once.

Does not write records or metrics (the caller feeds its results to a `RecordSink`) and does not create tasks.
"""

from __future__ import annotations

import collections
import secrets
import time
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Iterator

import ray
from ray.exceptions import RayActorError, RayError

from kgym.contract import EvalRequest, EvalResult, Verdict, WorkerReply
from ray_cluster.worker import VerifierWorker, WorkerConfig, WorkerHealth


@dataclass(frozen=True)
class PoolConfig:
    workers: int | None = None  # None: one per GPU of the cluster, else one per CPU it offers
    use_gpus: bool | None = None  # None: GPUs if the cluster has any
    cpus_per_worker: float = 1.0
    max_in_flight: int = 2  # calls queued on one worker: one running, one ready to start
    max_attempts: int = 3  # calls per evaluation before the farm gives up on it
    call_timeout_s: float = 1800.0  # a call running longer than this means the worker is wedged
    probe_interval_s: float = 30.0  # health probe of each worker at least this often
    probe_timeout_s: float = 60.0
    start_timeout_s: float = 600.0  # a new worker must answer ready() within this
    worker: WorkerConfig = field(default_factory=WorkerConfig)


@dataclass
class PoolStats:
    submitted: int = 0  # calls made to workers
    completed: int = 0  # results yielded
    retried: int = 0  # calls repeated because the farm failed
    gave_up: int = 0  # results yielded with outcome error after max_attempts
    duplicates: int = 0  # requests skipped because their id was seen or listed in skip
    replaced: int = 0  # workers killed and replaced
    replaced_why: list[str] = field(default_factory=list)


@dataclass
class _Call:
    request: EvalRequest
    attempt: int  # 1 for the first call
    submitted: float  # monotonic time of this call's submission
    errors: list[str]


@dataclass
class _Slot:
    index: int
    worker_id: str
    actor: Any
    inflight: dict[Any, _Call] = field(default_factory=dict)  # ObjectRef -> call, in submission order
    ready_ref: Any = None  # pending ready() call; None once the worker answered
    started: float = 0.0
    probe_ref: Any = None
    probe_sent: float = 0.0
    last_probe: float = 0.0
    last_reply: float = 0.0  # when the worker last finished a call (or started)
    health: WorkerHealth | None = None


def cluster_plan(config: PoolConfig) -> tuple[int, bool]:
    """(number of workers, GPU workers?) for the connected cluster."""
    res = ray.cluster_resources()
    gpus = int(res.get("GPU", 0))
    use_gpus = config.use_gpus if config.use_gpus is not None else gpus > 0
    if use_gpus and gpus == 0:
        raise ValueError("GPU workers asked for, but the Ray cluster has no GPU")
    if config.workers is not None:
        return max(1, config.workers), use_gpus
    if use_gpus:
        return gpus, True
    return max(1, int(res.get("CPU", 1) // max(config.cpus_per_worker, 1e-9))), False


class VerifierPool:
    """Create with a config, then `run(requests)`; `close()` (or a `with` block) kills the workers.

    `run` may be called several times; workers, statistics and the ids already yielded carry over."""

    def __init__(self, config: PoolConfig = PoolConfig()):
        if config.max_in_flight < 1 or config.max_attempts < 1:
            raise ValueError("need max_in_flight >= 1 and max_attempts >= 1")
        worker = config.worker
        if worker.case_secret is None:
            worker = replace(worker, case_secret=secrets.token_bytes(32))
        self.config = replace(config, worker=worker)
        self.num_workers, self.gpu = cluster_plan(self.config)
        self.stats = PoolStats()
        self._slots: list[_Slot] = []
        self._generation = collections.Counter()
        self._seen: set[str] = set()  # ids taken from the input (queued, running or done)
        self._done: set[str] = set()
        self._queue: collections.deque[_Call] = collections.deque()  # retries, served before new input
        self._results: collections.deque[EvalResult] = collections.deque()  # finished, not yet yielded
        for i in range(self.num_workers):
            self._slots.append(self._spawn(i))

    # -- workers ----------------------------------------------------------------------------------
    def _spawn(self, index: int) -> _Slot:
        gen = self._generation[index]
        self._generation[index] += 1
        worker_id = f"w{index}" + (f".{gen}" if gen else "")
        opts: dict[str, Any] = {"num_cpus": self.config.cpus_per_worker, "name": None}
        opts["num_gpus"] = 1 if self.gpu else 0
        actor = VerifierWorker.options(**{k: v for k, v in opts.items() if v is not None}).remote(
            worker_id, self.config.worker)
        now = time.monotonic()
        return _Slot(index=index, worker_id=worker_id, actor=actor, ready_ref=actor.ready.remote(), started=now,
                     last_probe=now, last_reply=now)

    def _replace(self, slot: _Slot, why: str) -> None:
        """Kill a worker, put its calls back in the queue (a farm failure for each), start another."""
        try:
            ray.kill(slot.actor, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass
        for call in reversed(list(slot.inflight.values())):
            call.errors.append(f"{slot.worker_id}: {why}")
            self._retry_or_give_up(call)
        slot.inflight.clear()
        self.stats.replaced += 1
        self.stats.replaced_why.append(f"{slot.worker_id}: {why}")
        self._slots[slot.index] = self._spawn(slot.index)

    def worker_ids(self) -> list[str]:
        return [s.worker_id for s in self._slots]

    def actor(self, worker_id: str) -> Any:
        """The actor handle of a live worker (for tests and operators)."""
        return next(s.actor for s in self._slots if s.worker_id == worker_id)

    def worker_states(self) -> dict[str, int]:
        """Workers by state (`kgym.metrics.WORKER_STATES`): starting, idle, busy."""
        counts = collections.Counter()
        for s in self._slots:
            counts["starting" if s.ready_ref is not None else ("busy" if s.inflight else "idle")] += 1
        return dict(counts)

    def health(self, timeout_s: float | None = None) -> list[WorkerHealth]:
        """Probe every worker now (answers even while they verify)."""
        return ray.get([s.actor.health.remote() for s in self._slots],
                       timeout=timeout_s or self.config.probe_timeout_s)

    def close(self) -> None:
        for s in self._slots:
            try:
                ray.kill(s.actor, no_restart=True)
            except Exception:  # noqa: BLE001
                pass
        self._slots = []

    def __enter__(self) -> "VerifierPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the loop ---------------------------------------------------------------------------------
    def _requeue(self, call: _Call) -> None:
        self._queue.appendleft(call)

    def run(self, requests: Iterable[EvalRequest], *, skip: Iterable[str] = (),
            tick_s: float = 0.5) -> Iterator[EvalResult]:
        """Yield one `EvalResult` per distinct evaluation id of `requests` not in `skip`, as they complete."""
        source = iter(requests)
        skipped = set(skip)
        exhausted = False
        results = self._results
        while True:
            exhausted = self._fill(source, skipped, exhausted)
            while results:
                yield results.popleft()
            if exhausted and not self._queue and not any(s.inflight for s in self._slots):
                return
            self._step(tick_s)
            while results:
                yield results.popleft()

    def _next_request(self, source: Iterator[EvalRequest], skipped: set[str]) -> EvalRequest | None:
        for req in source:
            if req.evaluation_id in self._seen or req.evaluation_id in skipped:
                self.stats.duplicates += 1
                continue
            self._seen.add(req.evaluation_id)
            return req
        return None

    def _fill(self, source: Iterator[EvalRequest], skipped: set[str], exhausted: bool) -> bool:
        # Least-loaded first, so work spreads over all workers before any gets a second call.
        for slot in sorted(self._slots, key=lambda s: len(s.inflight)):
            while len(slot.inflight) < self.config.max_in_flight:
                if self._queue:
                    call = self._queue.popleft()
                elif not exhausted:
                    req = self._next_request(source, skipped)
                    if req is None:
                        exhausted = True
                        break
                    call = _Call(req, 0, 0.0, [])
                else:
                    break
                call.attempt += 1
                call.submitted = time.monotonic()
                if not slot.inflight:
                    slot.last_reply = call.submitted  # the worker's clock for this call starts now
                slot.inflight[slot.actor.verify.remote(call.request)] = call
                self.stats.submitted += 1
                if call.attempt > 1:
                    self.stats.retried += 1
        return exhausted

    def _step(self, tick_s: float) -> None:
        refs: dict[Any, tuple[str, _Slot]] = {}
        for slot in self._slots:
            for ref in slot.inflight:
                refs[ref] = ("verify", slot)
            if slot.ready_ref is not None:
                refs[slot.ready_ref] = ("ready", slot)
            if slot.probe_ref is not None:
                refs[slot.probe_ref] = ("probe", slot)
        ready, _ = ray.wait(list(refs), num_returns=1, timeout=tick_s) if refs else ([], [])
        if ready:  # take whatever else is ready too, without waiting
            more, _ = ray.wait([r for r in refs if r not in ready], num_returns=len(refs) - 1, timeout=0) \
                if len(refs) > 1 else ([], [])
            ready = ready + more
        for ref in ready:
            kind, slot = refs[ref]
            if self._slots[slot.index] is not slot:
                continue  # the worker was replaced while handling an earlier ref of this batch
            if kind == "verify":
                self._on_verify(slot, ref)
            elif kind == "ready":
                self._on_ready(slot, ref)
            else:
                self._on_probe(slot, ref)
        self._check_deadlines()

    def _on_verify(self, slot: _Slot, ref: Any) -> None:
        call = slot.inflight.pop(ref)
        now = time.monotonic()
        slot.last_reply = now
        try:
            reply: WorkerReply = ray.get(ref)
        except RayActorError as e:
            slot.inflight[ref] = call  # _replace requeues every call of the dead worker, this one too
            self._replace(slot, f"worker died: {type(e).__name__}")
            return
        except RayError as e:  # an exception in the actor's method: kgym's failure, retry
            call.errors.append(f"{slot.worker_id}: {type(e).__name__}: {str(e)[:500]}")
            self._retry_or_give_up(call)
            self._probe(slot)
            return
        if reply.farm_error is not None:
            call.errors.append(f"{slot.worker_id}: {reply.farm_error[-500:]}")
            if call.attempt < self.config.max_attempts:
                self._requeue(call)
                self._probe(slot)
                return
        self._emit(EvalResult(request=call.request, verdict=reply.verdict, worker=reply.worker,
                              attempts=call.attempt, verify_s=reply.verify_s, latency_s=now - call.submitted,
                              started_at=reply.started_at, finished_at=reply.finished_at,
                              farm_error=None if reply.farm_error is None else "; ".join(call.errors)))
        if reply.farm_error is not None:
            self.stats.gave_up += 1
            self._probe(slot)

    def _retry_or_give_up(self, call: _Call) -> None:
        if call.attempt < self.config.max_attempts:
            self._requeue(call)
            return
        self.stats.gave_up += 1
        self._emit(give_up_result(call.request, call.attempt, call.errors,
                                           time.monotonic() - call.submitted))

    def _emit(self, result: EvalResult) -> None:
        if result.evaluation_id in self._done:
            self.stats.duplicates += 1
            return
        self._done.add(result.evaluation_id)
        self.stats.completed += 1
        self._results.append(result)

    def _on_ready(self, slot: _Slot, ref: Any) -> None:
        slot.ready_ref = None
        try:
            slot.health = ray.get(ref)
        except RayError as e:
            self._replace(slot, f"worker failed to start: {type(e).__name__}: {str(e)[:300]}")
            return
        if not slot.health.ok:
            self._replace(slot, "unhealthy at start: " + "; ".join(slot.health.problems))

    def _probe(self, slot: _Slot) -> None:
        if slot.probe_ref is None and slot.ready_ref is None:
            slot.probe_ref = slot.actor.health.remote()
            slot.probe_sent = time.monotonic()

    def _on_probe(self, slot: _Slot, ref: Any) -> None:
        slot.probe_ref = None
        slot.last_probe = time.monotonic()
        try:
            slot.health = ray.get(ref)
        except RayActorError as e:
            self._replace(slot, f"worker died: {type(e).__name__}")
            return
        except RayError as e:
            self._replace(slot, f"health probe failed: {type(e).__name__}: {str(e)[:300]}")
            return
        if not slot.health.ok:
            self._replace(slot, "unhealthy: " + "; ".join(slot.health.problems))

    def _check_deadlines(self) -> None:
        now = time.monotonic()
        for slot in list(self._slots):
            if slot.ready_ref is not None:
                if now - slot.started > self.config.start_timeout_s:
                    self._replace(slot, f"did not start within {self.config.start_timeout_s:g} s")
                continue
            if slot.probe_ref is not None and now - slot.probe_sent > self.config.probe_timeout_s:
                self._replace(slot, f"health probe unanswered for {self.config.probe_timeout_s:g} s")
                continue
            if slot.inflight and now - slot.last_reply > self.config.call_timeout_s:
                self._replace(slot, f"a call ran past {self.config.call_timeout_s:g} s")
                continue
            if now - slot.last_probe > self.config.probe_interval_s:
                self._probe(slot)
                slot.last_probe = now


def give_up_result(request: EvalRequest, attempts: int, errors: list[str], latency_s: float) -> EvalResult:
    """The one row of an evaluation the farm could not complete: outcome "error", never a verdict."""
    why = "; ".join(errors) or "the farm failed"
    verdict = Verdict(error=f"farm gave up after {attempts} attempt(s): {why}"[:8000])
    return EvalResult(request=request, verdict=verdict, worker=None, attempts=attempts, verify_s=None,
                      latency_s=latency_s, farm_error=why)
