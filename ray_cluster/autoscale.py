"""Asking Ray's autoscaler for verifier GPUs while work queues, and releasing the ask once it drains.

The request is Ray's `ray.autoscaler.sdk.request_resources(bundles=[...])`: a standing demand for
that set of resource shapes to fit on the cluster (existing nodes count; each call replaces the
previous one), which the autoscaler (cluster launcher or KubeRay's) meets by adding worker nodes, up
to its own max_workers. One bundle per verifier worker wanted: `{"CPU": cpus_per_worker, "GPU": 1}`
(no GPU key for CPU workers).

Order of events (`ResourceAsk.update`, called by the service every tick):
1. work is queued behind full workers, or fewer workers run than `min_workers`: the farm wants
   `min(ceiling, max(min_workers, workers + ceil(queued / max_in_flight)))` workers; if that is more
   than it asked for last, it asks for that many bundles (never fewer while work queues, so a
   batch's ask only grows);
2. nothing queued or running for `release_after_s` and at least `min_workers` running: the ask goes
   back to `min_workers` bundles, or to nothing (`request_resources(bundles=[])`) when that is 0;
3. the service closes: the ask is released the same way.
With `VerifierPool.run` keeping two calls per worker slot outstanding, a busy batch queues about one
worker's worth per worker, so each ask is about twice the workers running: the farm doubles while
work waits, up to the ceiling or the autoscaler's limit.

`standing_request()` reads back what the cluster holds now (the autoscaler v1 key in the GCS's KV
store, or autoscaler v2's cluster resource constraint), for operators and the tests. Does not start
workers: new nodes appear in `cluster_watch.py`'s view, and the service places workers on them.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field


def _request(bundles: list[dict[str, float]]) -> None:
    from ray.autoscaler.sdk import request_resources

    request_resources(bundles=bundles)


def standing_request() -> list[dict[str, float]]:
    """The bundles the cluster's autoscaler is asked for now (empty: none), whichever autoscaler runs."""
    import ray
    from ray.autoscaler.v2.utils import is_autoscaler_v2

    if is_autoscaler_v2():
        from ray._raylet import GcsClient
        from ray.autoscaler.v2.sdk import get_cluster_resource_state

        address = ray.get_runtime_context().gcs_address
        state = get_cluster_resource_state(GcsClient(address))
        out: list[dict[str, float]] = []
        for constraint in state.cluster_resource_constraints:
            for by_count in constraint.resource_requests:
                out += [dict(by_count.request.resources_bundle)] * by_count.count
        return out
    from ray._private.ray_constants import AUTOSCALER_RESOURCE_REQUEST_CHANNEL
    from ray.experimental.internal_kv import _internal_kv_get

    raw = _internal_kv_get(AUTOSCALER_RESOURCE_REQUEST_CHANNEL)
    return list(json.loads(raw)) if raw else []


@dataclass
class ResourceAsk:
    """The farm's standing ask of the autoscaler (rules in the module docstring)."""

    bundle: dict[str, float]
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
            _request([dict(self.bundle) for _ in range(n)])
        except Exception as e:  # noqa: BLE001 - a failed ask leaves the farm as it is; tried again next change
            self.errors.append(f"request_resources({n} bundles): {type(e).__name__}: {str(e)[:300]}")
            return
        self.asked = n
        self.history.append(n)
