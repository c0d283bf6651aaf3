"""One generation call for every episode waiting on the model: `await batcher.generate(...)`.

Episodes run as coroutines on one event loop. Each turn an episode asks for one completion and
awaits it; the batcher gathers every request that arrived while the engine was busy and sends them
to the engine as one `generate` call, on a worker thread, so the loop keeps running the steps of
other episodes (their verifications) while the model generates. Generation and verification thus
overlap, and each engine call batches all the live episodes that are ready: single-turn answers
and repair turns alike. Order of events per round: requests queue -> the worker takes all of them
-> one engine call -> every request's future is resolved -> the next round takes what queued
meanwhile. A failed engine call fails the futures of that round only (their episodes see the
exception; the batcher keeps serving); a request whose adapter the engine no longer serves (retired
while it queued) fails alone with `StaleAdapter`. Does not know about episodes or tool calls.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kgym.rollout.adapters import PolicyAdapter
from kgym.rollout.engine import Completion, StaleAdapter
from kgym.rollout.sampling import SamplingConfig


@dataclass
class _Request:
    prompt_ids: tuple[int, ...]
    sampling: SamplingConfig
    adapter: PolicyAdapter | None
    seed: int | None
    future: asyncio.Future


@dataclass
class BatchStats:
    calls: int = 0
    requests: int = 0
    tokens: int = 0
    seconds: float = 0.0  # inside engine calls
    largest_batch: int = 0
    batch_sizes: list[int] = field(default_factory=list)

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0


class GenerationBatcher:
    def __init__(self, engine: Any, max_batch: int = 256):
        self.engine = engine  # anything with VLLMEngine.generate's signature
        self.max_batch = max_batch
        self.stats = BatchStats()
        self._queue: list[_Request] = []
        self._wake: asyncio.Event | None = None
        self._worker: asyncio.Task | None = None

    @property
    def queued(self) -> int:
        return len(self._queue)

    async def generate(self, prompt_ids: Sequence[int], sampling: SamplingConfig, adapter: PolicyAdapter | None,
                       seed: int | None = None) -> Completion:
        loop = asyncio.get_running_loop()
        if self._worker is None or self._worker.done() or self._wake is None:
            self._wake = asyncio.Event()
            self._worker = loop.create_task(self._run())
        req = _Request(tuple(prompt_ids), sampling, adapter, seed, loop.create_future())
        self._queue.append(req)
        self._wake.set()
        return await req.future

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            await self._wake.wait()
            # Let every episode that is ready this instant enqueue before the call is made.
            await asyncio.sleep(0)
            batch, self._queue = self._queue[:self.max_batch], self._queue[self.max_batch:]
            if not self._queue:
                self._wake.clear()
            # A request on an adapter retired since it queued fails alone, not the whole round.
            serves = getattr(self.engine, "serves", None)
            if serves is not None:
                for r in [r for r in batch if not serves(r.adapter)]:
                    r.future.set_exception(StaleAdapter(f"policy version {r.adapter.version} was retired "
                                                        f"while its request queued"))
                batch = [r for r in batch if serves(r.adapter)]
            if not batch:
                continue
            t0 = time.perf_counter()
            try:
                outs = await asyncio.to_thread(self.engine.generate, [r.prompt_ids for r in batch],
                                               [r.sampling for r in batch], [r.adapter for r in batch],
                                               seeds=[r.seed for r in batch])
            except Exception as e:  # noqa: BLE001 - the round's episodes get the error; the batcher lives on
                for r in batch:
                    if not r.future.done():
                        r.future.set_exception(e)
                continue
            s = self.stats
            s.calls += 1
            s.requests += len(batch)
            s.seconds += time.perf_counter() - t0
            s.largest_batch = max(s.largest_batch, len(batch))
            s.batch_sizes.append(len(batch))
            for r, row in zip(batch, outs):
                s.tokens += len(row[0].token_ids)
                if not r.future.done():
                    r.future.set_result(row[0])
