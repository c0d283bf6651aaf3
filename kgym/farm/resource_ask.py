"""How many verifier workers the farm asks the autoscaler for while work queues, and when it releases
the ask once work drains: `ResourceAsk`, the rule, without Ray.

The ask is a list of bundles, one per verifier worker wanted: `{"CPU": cpus_per_worker, "GPU": 1}`
(no GPU key for CPU workers), handed to `request`, a function given by whoever owns the ask (the farm
service gives Ray's `request_resources(bundles=...)`, `ray_cluster/autoscale.py`: a standing demand
that replaces the previous one and that the autoscaler meets by adding nodes).

Order of events (`ResourceAsk.update`, called by the service every tick):
1. work is queued behind full workers, or fewer workers run than `min_workers`: the farm wants
   `min(ceiling, max(min_workers, workers + ceil(queued / max_in_flight)))` workers; if that is more
   than it asked for last, it asks for that many bundles (never fewer while work queues, so a
   batch's ask only grows);
2. nothing queued or running for `release_after_s` and at least `min_workers` running: the ask goes
   back to `min_workers` bundles, or to nothing (`request([])`) when that is 0;
3. the service closes: the ask is released the same way.
With `VerifierPool.run` keeping two calls per worker slot outstanding, a busy batch queues about one
worker's worth per worker, so each ask is about twice the workers running: the farm doubles while
work waits, up to the ceiling or the autoscaler's limit.

A failed `request` leaves the ask as it was (the error is kept in `errors`); the next change tries
again. Does not start workers or read the cluster.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class ResourceAsk:
    """The farm's standing ask of the autoscaler (rules in the module docstring)."""

    bundle: dict[str, float]
    request: Callable[[list[dict[str, float]]], object]  # the autoscaler's door: takes the whole ask
    min_workers: int
    ceiling: int | None
    max_in_flight: int
    release_after_s: float
    asked: int = 0  # bundles asked for now
    history: list[int] = field(default_factory=list)  # every ask made, in order (0: released)
    errors: list[str] = field(default_factory=list)
    _idle_since: float | None = None

    def want(self, queued: int, workers: int) -> int:
        n = max(self.min_workers, workers + math.ceil(queued / self.max_in_flight))
        return n if self.ceiling is None else min(n, self.ceiling)

    def update(self, *, queued: int, pending: int, workers: int, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        if queued > 0 or workers < self.min_workers:
            self._idle_since = None
            n = self.want(queued, workers)
            if n > self.asked and n > 0:
                self._ask(n)
            return
        if pending > 0:
            self._idle_since = None
            return
        if self._idle_since is None:
            self._idle_since = now
        if now - self._idle_since >= self.release_after_s and self.asked > self.min_workers:
            self._ask(self.min_workers)

    def release(self) -> None:
        if self.asked:
            self._ask(0)

    def _ask(self, n: int) -> None:
        try:
            self.request([dict(self.bundle) for _ in range(n)])
        except Exception as e:  # noqa: BLE001 - a failed ask leaves the farm as it is; tried again next change
            name = getattr(self.request, "__name__", "request")
            self.errors.append(f"{name}({n} bundles): {type(e).__name__}: {str(e)[:300]}")
            return
        self.asked = n
        self.history.append(n)
