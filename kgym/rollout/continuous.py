"""Continuous batching: `await batcher.generate(...)` joins the engine's running batch at once.

The round batcher (`batcher.py`) sends every request queued while the engine was busy as one
blocking `generate` call, so a repair turn that becomes ready a moment after a call began waits
for the whole call, and rounds fragment (an H200 run: 160-260 tokens/s where vLLM alone gave
1,432). This batcher drives the engine's request stream instead (`VLLMEngine.add` / `step`): one
worker thread runs engine iterations back to back while any request is unfinished, and before each
iteration admits every request queued since the last, so a request waits at most one iteration
(tens of milliseconds) to start decoding, and leaves the batch the iteration it finishes.

Order of events: `generate` queues a request and wakes the worker -> the worker admits it (or
refuses it alone) -> iterations -> the iteration it finishes in resolves its future on the caller's
event loop.

Every request is isolated, as in the round batcher:
- refused alone at admission: an adapter the engine no longer serves (`StaleAdapter`), a prompt with
  no room for one new token within `max_model_len` (`PromptTooLong`), and any error vLLM raises
  while adding that one request (its own validation);
- `EngineUnavailable` (asleep, engine core dead) fails the requests it reaches and the worker keeps
  serving; an iteration that raises anything else fails the requests then running (no single one
  can be blamed: vLLM validated each at admission) and the worker keeps serving.
- Base-model and LoRA requests never run in one iteration (a mixed batch gave base requests
  LoRA-altered tokens on vLLM CPU 0.32; see engine.py): a request of the other kind waits until the
  running kind drains, and requests queued after it wait behind it, so neither kind starves.

With a `trace` list, every iteration appends (seconds since the first, requests decoded in it,
requests waiting for admission): requests in flight over time (`benchmarks/rollout_occupancy.py`).

`stats.calls` counts admissions (iterations that took in at least one request) and
`stats.requests` the requests admitted, so `requests / calls` reads as the round batcher's mean
batch; `stats.steps` and `stats.mean_running` give the batch each iteration really decoded.
Does not know about episodes or tool calls.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from kgym.rollout.adapters import PolicyAdapter
from kgym.rollout.batcher import BatchStats, Request
from kgym.rollout.engine import Completion, EngineUnavailable, PromptTooLong, StaleAdapter
from kgym.rollout.sampling import SamplingConfig


def _settle(future: asyncio.Future, value: Any, error: BaseException | None) -> None:
    if future.done():  # the caller gave up (cancelled)
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class ContinuousBatcher:
    def __init__(self, engine: Any, max_running: int = 256, idle_poll_s: float = 0.5,
                 trace: list[tuple[float, int, int]] | None = None):
        self.engine = engine  # anything with VLLMEngine's add/step/streaming/abort_streamed
        self.max_running = max_running
        self.idle_poll_s = idle_poll_s
        self.trace = trace
        self._t0: float | None = None
        self.stats = BatchStats()
        self._pending: deque[Request] = deque()
        self._running: dict[str, Request] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def queued(self) -> int:
        """Requests not answered yet (waiting for admission or decoding)."""
        with self._lock:
            return len(self._pending) + len(self._running)

    async def generate(self, prompt_ids: Sequence[int], sampling: SamplingConfig, adapter: PolicyAdapter | None,
                       seed: int | None = None) -> Completion:
        loop = asyncio.get_running_loop()
        req = Request(tuple(prompt_ids), sampling, adapter, seed, loop.create_future(), loop)
        with self._lock:
            if self._closed:
                raise RuntimeError("the batcher is closed")
            self._pending.append(req)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="kgym-continuous-batcher", daemon=True)
                self._thread.start()
        self._wake.set()
        return await req.future

    def close(self) -> None:
        """Stop the worker after its iteration in progress; unanswered requests fail."""
        with self._lock:
            self._closed = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=60)

    # -- the worker thread -----------------------------------------------------------------------
    def _answer(self, req: Request, value: Any = None, error: BaseException | None = None) -> None:
        try:
            req.loop.call_soon_threadsafe(_settle, req.future, value, error)
        except RuntimeError:  # the caller's loop is closed: nobody waits for this answer
            pass

    def _refuse(self, req: Request, error: BaseException) -> None:
        self.stats.refused += 1
        self._answer(req, error=error)

    def _admit(self) -> None:
        serves = getattr(self.engine, "serves", None)
        limit = getattr(self.engine, "max_model_len", None)
        admitted = 0
        while True:
            with self._lock:
                if not self._pending or len(self._running) >= self.max_running:
                    break
                req = self._pending[0]
                if self._running and next(iter(self._running.values())).lora != req.lora:
                    break  # the other kind waits for the running kind to drain; later requests wait behind it
                self._pending.popleft()
            if req.future.done():
                continue
            if serves is not None and not serves(req.adapter):
                self._refuse(req, StaleAdapter(f"policy version {req.adapter.version} was retired "
                                               f"while its request queued"))
                continue
            if isinstance(limit, int) and len(req.prompt_ids) >= limit:
                self._refuse(req, PromptTooLong(f"prompt of {len(req.prompt_ids)} tokens leaves no room to "
                                                f"generate within max_model_len {limit}"))
                continue
            try:
                key = self.engine.add(req.prompt_ids, req.sampling, req.adapter, req.seed)
            except EngineUnavailable as e:
                self._answer(req, error=e)
                continue
            except Exception as e:  # noqa: BLE001 - the request's own fault: it fails alone
                self._refuse(req, e)
                continue
            with self._lock:
                self._running[key] = req
            admitted += 1
        if admitted:
            self.stats.calls += 1
            self.stats.requests += admitted
            self.stats.batch_sizes.append(admitted)

    def _fail_running(self, error: BaseException) -> None:
        self.engine.abort_streamed()
        with self._lock:
            failed, self._running = list(self._running.values()), {}
        for req in failed:
            self._answer(req, error=error)

    def _work(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    failed = list(self._pending) + list(self._running.values())
                    self._pending.clear()
                    break
            self._admit()
            with self._lock:
                running = len(self._running)
            if not running:
                self._wake.wait(self.idle_poll_s)
                self._wake.clear()
                continue
            t0 = time.perf_counter()
            if self.trace is not None:
                self._t0 = t0 if self._t0 is None else self._t0
                with self._lock:
                    waiting = len(self._pending)
                self.trace.append((t0 - self._t0, running, waiting))
            try:
                done = self.engine.step()
            except Exception as e:  # noqa: BLE001 - EngineUnavailable or an iteration's failure
                self._fail_running(e)
                continue
            s = self.stats
            s.seconds += time.perf_counter() - t0
            s.steps += 1
            s.running_sum += running
            s.largest_batch = max(s.largest_batch, running)
            for key, completion in done:
                with self._lock:
                    req = self._running.pop(key, None)
                if req is not None:
                    s.tokens += len(completion.token_ids)
                    self._answer(req, completion)
        self.engine.abort_streamed()
        for req in failed:
            self._answer(req, error=RuntimeError("the batcher was closed before this request was answered"))
