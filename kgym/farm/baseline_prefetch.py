"""Baselines off the candidate's path: `BaselineRequest` (a task about to be handed out) and the
`Prefetcher` a `VerifierWorker` runs beside its verifier.

    pool.prefetch([BaselineRequest.for_task(t) for t in tasks])   # the driver, when it draws tasks
    # -> FarmService.prefetch: one worker per host measures each, spread over the host's workers
    # -> VerifierWorker.prefetch -> Prefetcher.offer: queued, measured while the worker is idle

The prefetcher measures baselines through `Verifier.prefetch`, which is the candidate's own path
(same inputs from the same secret and seed, same model, device, protocol and cache key), so a
candidate's verification later finds them in the cache and validates them beside its own run like
any cached entry. It also measures, after a verdict, the torch.compile baseline that the verdict left
out (`VerifyConfig.defer_compile`, eager rewards), and hands every full measurement (on a
candidate's path, prefetched or deferred) to `emit` as rows of the run's baselines table
(`kgym.records.baseline_table`).

Order of events on one worker (one GPU):
1. `verifying()` wraps each verification: it takes the GPU turn (waiting for a measurement already
   running: at most one baseline, an eager one first) and marks the worker busy until it returns.
2. `after_verdict(request, verdict)` queues the deferred compile figure (if the verdict lacks it)
   and the rows of what the verification measured itself.
3. The prefetcher's thread takes an item only once the worker has been idle for `idle_grace_s`
   (back-to-back calls arrive within ~1 ms of each other, so a queued verification is never
   overtaken), takes the GPU turn, measures that one item and gives the turn back. Items on the
   candidates' path (eager, and compile where the verdict would wait for it) go before deferred
   compile figures, which start only after `deferred_grace_s` of idle time. So nothing it
   measures overlaps a candidate's timed block, or any other part of a verification, on that GPU.
4. Rows go to `emit` from the same thread, off every candidate's path.
Plain threads, without Ray: the worker actor (`ray_cluster/worker.py`) builds one over its verifier
and hands it an `emit` that sends rows to its RecordSink. Does not choose workers
(`ray_cluster/service.py`) or write records (`ray_cluster/sink.py`).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kgym.contract import EvalRequest, Verdict, WorkerInfo
from kgym.contract.ids import source_hash

IDLE_GRACE_S = 0.25  # idle time before a measurement may start (the farm's idle gap is ~1 ms)
# Idle time before a deferred torch.compile figure may start: it takes 10-55 s on a GPU and cannot be
# interrupted, and no verdict waits for it, so it waits until the farm is clearly idle.
DEFERRED_GRACE_S = 5.0
ON_PATH, DEFERRED = 0, 1  # priorities: baselines a verdict waits for, then the ones it does not


@dataclass(frozen=True)
class BaselineRequest:
    """A task about to be handed out: what the baselines of its verifications depend on (the
    reference, the public seed that fixes its shapes, the verifier overrides), and the task spec the
    baselines table files the figures under."""

    task: Mapping[str, Any]
    reference: str
    seed: int
    overrides: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if "task_id" not in self.task or "family" not in self.task:
            raise ValueError("a BaselineRequest's task needs at least task_id and family")
        if "seed" in self.overrides:
            raise ValueError("give the public seed as BaselineRequest.seed, not in overrides")

    @classmethod
    def of(cls, request: EvalRequest) -> BaselineRequest:
        """The baselines an evaluation request's verification will use."""
        return cls(task=request.task, reference=request.reference, seed=request.seed,
                   overrides=dict(request.overrides))

    @classmethod
    def for_task(cls, task: Any, **overrides: Any) -> BaselineRequest:
        """For a `kgym.tasks.Task`, as `EvalRequest.for_task` would verify it (same overrides)."""
        opts = dict(task.verify_options())
        seed = int(opts.pop("seed"))
        opts.update(overrides)
        return cls(task=task.spec.to_dict(), reference=task.reference, seed=seed, overrides=opts)

    @property
    def key(self) -> str:
        """Identity for de-duplication: same reference, seed and overrides, same baselines."""
        return f"{source_hash(self.reference)[:24]}:{self.seed}:{sorted(self.overrides.items())!r}"


def as_baseline_request(item: BaselineRequest | EvalRequest) -> BaselineRequest:
    if isinstance(item, BaselineRequest):
        return item
    if isinstance(item, EvalRequest):
        return BaselineRequest.of(item)
    raise TypeError(f"prefetch takes BaselineRequest or EvalRequest items, not {type(item).__name__}")


@dataclass(order=True)
class _Item:
    priority: int
    seq: int
    request: BaselineRequest = field(compare=False)
    kinds: tuple[str, ...] = field(compare=False)
    source: str = field(compare=False)  # prefetch | deferred (re-measure) | late (deferred, cached ones stand)


@dataclass
class PrefetchStats:
    queued: int = 0  # items waiting
    measuring: bool = False
    measured: int = 0  # full baseline measurements made off the path
    seconds: float = 0.0  # their wall time
    skipped: int = 0  # items found cached (or not wanted) when their turn came
    failed: list[str] = field(default_factory=list)  # items whose reference could not be built
    rows: int = 0  # rows handed to emit
    emit_errors: list[str] = field(default_factory=list)


class Prefetcher:
    """One worker's baseline measurer (see the module docstring for the order of events). `emit`
    takes a list of baseline rows (the worker sends them to its RecordSink); None drops them."""

    def __init__(self, verifier: Any, info: WorkerInfo, emit: Callable[[list[dict[str, Any]]], Any] | None = None,
                 *, idle_grace_s: float = IDLE_GRACE_S, deferred_grace_s: float = DEFERRED_GRACE_S,
                 start: bool = True):
        self.verifier = verifier
        self.info = info
        self.emit = emit
        self.idle_grace_s = idle_grace_s
        self.deferred_grace_s = deferred_grace_s
        self.stats = PrefetchStats()
        self._turn = threading.Lock()  # the GPU: a verification, or one baseline measurement
        self._cond = threading.Condition()
        self._heap: list[_Item] = []
        self._seq = itertools.count()
        self._queued: set[tuple[str, tuple[str, ...], str]] = set()
        self._deferred_done: set[str] = set()
        self._outbox: list[dict[str, Any]] = []
        self._sending = False
        self._busy = 0
        self._idle_since = time.monotonic()
        self._closed = False
        self._thread: threading.Thread | None = None
        if start:
            self._thread = threading.Thread(target=self._loop, name="kgym-baseline-prefetch", daemon=True)
            self._thread.start()

    # -- what is coming -------------------------------------------------------------------------
    def offer(self, items: list[BaselineRequest | EvalRequest]) -> int:
        """Queue the baselines of upcoming verifications; returns how many items were new. A
        torch.compile figure that their verdicts will not wait for (`defer_compile`) is not queued
        here: it is measured after the verdict, so a long compile never runs when they arrive."""
        new = 0
        for item in items:
            req = as_baseline_request(item)
            defer = bool(req.overrides.get("defer_compile", self.verifier.config.defer_compile))
            new += self._push(req, ("eager",), ON_PATH, "prefetch")
            if not defer:  # deferred, no verdict waits for it: measured after the verdicts instead,
                new += self._push(req, ("compile",), ON_PATH, "prefetch")  # never in their way
        return new

    def _push(self, req: BaselineRequest, kinds: tuple[str, ...], priority: int, source: str) -> int:
        tag = (req.key, kinds, source)
        with self._cond:
            if tag in self._queued or self._closed:
                return 0
            self._queued.add(tag)
            heapq.heappush(self._heap, _Item(priority, next(self._seq), req, kinds, source))
            self.stats.queued = len(self._heap)
            self._cond.notify_all()
        return 1

    # -- the candidate's path -------------------------------------------------------------------
    @contextlib.contextmanager
    def verifying(self):
        """Around one verification: the GPU turn, and busy (no measurement starts) until it returns."""
        with self._cond:
            self._busy += 1
        try:
            with self._turn:
                yield
        finally:
            with self._cond:
                self._busy -= 1
                self._idle_since = time.monotonic()
                self._cond.notify_all()

    def after_verdict(self, request: EvalRequest, verdict: Verdict) -> None:
        """Rows of the baselines the verification measured itself; its deferred compile figure queued."""
        rows = [self._row(BaselineRequest.of(request), kind, t, "candidate", None, None)
                for kind in ("eager", "compile") if (t := verdict.timings.get(kind)) is not None and not t.cached]
        if rows:
            with self._cond:
                self._outbox.extend(rows)
                self._cond.notify_all()
        if verdict.timings.get("candidate") is None or verdict.timings.get("compile") is not None:
            return
        req = BaselineRequest.of(request)
        defer = bool(req.overrides.get("defer_compile", self.verifier.config.defer_compile))
        if defer and req.key not in self._deferred_done and "compile" in self._kinds(req):
            # A fresh eager figure (first sight, or a cached one found stale beside the candidate):
            # any cached compile figure is distrusted with it and re-measured; otherwise a compile
            # figure prefetched meanwhile is used as it is.
            eager = verdict.timings.get("eager")
            self._push(req, ("compile",), DEFERRED, "deferred" if eager is None or not eager.cached else "late")

    def _kinds(self, req: BaselineRequest) -> list[str]:
        try:
            return self.verifier.baseline_kinds(**{**req.overrides, "seed": req.seed})
        except (TypeError, ValueError):  # an unknown override: the item fails when measured, with its reason
            return ["eager", "compile"]

    # -- idle time ------------------------------------------------------------------------------
    def run_one(self, wait_s: float = 0.0) -> bool:
        """Measure the next item if the worker is idle (what the thread does; tests call it too).
        True when an item was taken."""
        with self._cond:
            deadline = time.monotonic() + wait_s
            while not self._closed and (not self._heap or not self._idle_now()):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, self._grace_left() or left))
            if self._closed:
                return False
        if not self._turn.acquire(blocking=False):
            return False
        try:
            with self._cond:
                if not self._heap or not self._idle_now():
                    return False
                item = heapq.heappop(self._heap)
                self._queued.discard((item.request.key, item.kinds, item.source))
                self.stats.queued = len(self._heap)
                self.stats.measuring = True
            self._measure(item)
            return True
        finally:
            with self._cond:
                self.stats.measuring = False
                self._cond.notify_all()
            self._turn.release()

    def _grace(self) -> float:
        return self.idle_grace_s if not self._heap or self._heap[0].priority == ON_PATH else self.deferred_grace_s

    def _idle_now(self) -> bool:
        return self._busy == 0 and time.monotonic() - self._idle_since >= self._grace()

    def _grace_left(self) -> float:
        return max(0.0, self._grace() - (time.monotonic() - self._idle_since)) if self._busy == 0 else 0.0

    def _measure(self, item: _Item) -> None:
        req = item.request
        try:
            measured = self.verifier.prefetch(req.reference, kinds=item.kinds, remeasure=item.source == "deferred",
                                              **{**req.overrides, "seed": req.seed})
            source = "deferred" if item.source == "late" else item.source
        except Exception as e:  # noqa: BLE001 - a bad request is reported, never fatal to the worker
            self.stats.failed.append(f"{req.task.get('task_id')} seed {req.seed}: {type(e).__name__}: "
                                     f"{str(e)[:300]}\n{traceback.format_exc(limit=3)[-500:]}")
            return
        if item.source in ("deferred", "late"):
            self._deferred_done.add(req.key)
        if not measured:
            self.stats.skipped += 1
            return
        rows = []
        for m in measured:
            self.stats.measured += 1
            self.stats.seconds += m.seconds
            rows.append(self._row(req, m.kind, m.timing, source, m.seconds, m.measured_at))
        with self._cond:
            self._outbox.extend(rows)

    def _row(self, req: BaselineRequest, kind: str, timing: Any, source: str, seconds: float | None,
             measured_at: float | None) -> dict[str, Any]:
        from kgym.records.baseline_table import baseline_row

        return baseline_row(task=req.task, seed=req.seed, kind=kind, timing=timing, source=source,
                            device=str(self.verifier.device), worker=self.info, seconds=seconds,
                            measured_at=measured_at)

    def _send(self) -> None:
        with self._cond:
            rows, self._outbox = self._outbox, []
            self._sending = bool(rows)
        try:
            if rows and self.emit is not None:
                self.emit(rows)
                self.stats.rows += len(rows)
        except Exception as e:  # noqa: BLE001 - the figures stay in the cache; only their rows are lost
            self.stats.emit_errors.append(f"{len(rows)} row(s): {type(e).__name__}: {str(e)[:300]}")
        finally:
            with self._cond:
                self._sending = False

    def _loop(self) -> None:
        while not self._closed:
            self._send()
            if not self.run_one(wait_s=0.5):
                with self._cond:
                    if not self._closed and not self._outbox:
                        self._cond.wait(0.5)
        self._send()

    # -- views and shutdown ---------------------------------------------------------------------
    def settle(self, timeout_s: float) -> bool:
        """Wait until nothing is queued or being measured and every row was handed to `emit`
        (the worker must be left idle meanwhile); False on timeout."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._cond:
                if not self._heap and not self.stats.measuring and not self._outbox and not self._sending:
                    return True
            if self._thread is None:
                self.run_one(wait_s=0.05)
                self._send()
            else:
                time.sleep(0.05)
        return False

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._heap.clear()
            self.stats.queued = 0
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
