"""One generation call for every episode waiting on the model: `await batcher.generate(...)`.

Episodes run as coroutines on one event loop. Each turn an episode asks for one completion and
awaits it; the batcher gathers every request that arrived while the engine was busy and sends them
to the engine as one `generate` call, on a worker thread, so the loop keeps running the steps of
other episodes (their verifications) while the model generates. Generation and verification thus
overlap, and each engine call batches all the live episodes that are ready: single-turn answers
and repair turns alike. Order of events per round: requests queue -> the worker takes all of them
-> one engine call -> every request's future is resolved -> the next round takes what queued
meanwhile.

Every request is isolated: one bad request fails its own episode, never its round (vLLM refuses a
whole call for one invalid request, which made every episode of the round an error).
- Refused before the call, alone: a request whose adapter the engine no longer serves (retired
  while it queued: `StaleAdapter`), and a prompt that leaves no room for one new token within the
  engine's `max_model_len` (`PromptTooLong`; vLLM's own refusal of it would fail the whole call).
- A call that fails anyway is split in halves and each half retried, down to single requests: the
  healthy requests are served (in as few calls as the split allows: about 2 log2(k) extra calls for
  one bad request among k), and each bad one fails with the engine's own error. Retried requests
  keep their seeds, so a seeded request gives the same completion.
- `EngineUnavailable` (asleep, vLLM's engine core dead) fails the whole round at once: no request
  caused it, so no split could serve any.
The batcher keeps serving after every failure. `BatchStats.splits` and `.refused` count them.
Does not know about episodes or tool calls.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kgym.rollout.adapters import PolicyAdapter
from kgym.rollout.engine import Completion, EngineUnavailable, PromptTooLong, StaleAdapter
from kgym.rollout.sampling import SamplingConfig


@dataclass
class Request:
    """One completion asked of the engine, awaited on `future` (in `loop`'s event loop)."""

    prompt_ids: tuple[int, ...]
    sampling: SamplingConfig
    adapter: PolicyAdapter | None
    seed: int | None
    future: asyncio.Future
    loop: asyncio.AbstractEventLoop | None = None

    @property
    def lora(self) -> bool:
        return self.adapter is not None and self.adapter.lora_id is not None


@dataclass
class BatchStats:
    calls: int = 0
    requests: int = 0
    tokens: int = 0
    seconds: float = 0.0  # inside engine calls
    largest_batch: int = 0
    batch_sizes: list[int] = field(default_factory=list)
    splits: int = 0  # failed calls split in halves to isolate a bad request
    refused: int = 0  # requests failed alone (before the call, or isolated by splitting)
    steps: int = 0  # engine iterations (continuous batching only)
    running_sum: int = 0  # requests decoded, summed over iterations (continuous batching only)

    @property
    def mean_running(self) -> float:
        """Requests per engine iteration: the batch the engine really decoded (continuous batching)."""
        return self.running_sum / self.steps if self.steps else 0.0

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0


class GenerationBatcher:
    def __init__(self, engine: Any, max_batch: int = 256):
        self.engine = engine  # anything with VLLMEngine.generate's signature
        self.max_batch = max_batch
        self.stats = BatchStats()
        self._queue: list[Request] = []
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
        req = Request(tuple(prompt_ids), sampling, adapter, seed, loop.create_future())
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
            # Refused alone before the call: an adapter retired since it queued, a prompt vLLM would refuse.
            serves = getattr(self.engine, "serves", None)
            limit = getattr(self.engine, "max_model_len", None)
            kept = []
            for r in batch:
                if serves is not None and not serves(r.adapter):
                    self._refuse(r, StaleAdapter(f"policy version {r.adapter.version} was retired "
                                                 f"while its request queued"))
                elif isinstance(limit, int) and len(r.prompt_ids) >= limit:
                    self._refuse(r, PromptTooLong(f"prompt of {len(r.prompt_ids)} tokens leaves no room to "
                                                  f"generate within max_model_len {limit}"))
                else:
                    kept.append(r)
            if kept:
                await self._serve(kept)

    def _refuse(self, r: Request, e: BaseException) -> None:
        self.stats.refused += 1
        if not r.future.done():
            r.future.set_exception(e)

    async def _serve(self, batch: list[Request]) -> None:
        """One engine call for `batch`; on failure, its halves retried (see the module docstring)."""
        t0 = time.perf_counter()
        try:
            outs = await asyncio.to_thread(self.engine.generate, [r.prompt_ids for r in batch],
                                           [r.sampling for r in batch], [r.adapter for r in batch],
                                           seeds=[r.seed for r in batch])
        except EngineUnavailable as e:
            for r in batch:
                if not r.future.done():
                    r.future.set_exception(e)
            return
        except Exception as e:  # noqa: BLE001 - isolate the request that caused it; the batcher lives on
            if len(batch) == 1:
                self._refuse(batch[0], e)
                return
            self.stats.splits += 1
            half = len(batch) // 2
            await self._serve(batch[:half])
            await self._serve(batch[half:])
            return
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
