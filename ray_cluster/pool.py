"""`VerifierPool`: the driver-side client of the farm service, and the batch path of the jobs.

    with VerifierPool(PoolConfig(), sink=sink) as pool:   # starts a FarmService actor
        for result in pool.run(requests):                  # as they complete
            ...
    evaluator = FarmEvaluator(pool)                        # episodes await the same service

Covers starting (or attaching to) a `FarmService` actor (`service.py`: placement that follows the
cluster's nodes, queue, backpressure per worker, retries, replacement, exactly-once by evaluation id,
streaming to the sink, autoscaler asks), and `run(requests, skip=...)`: a thin client that submits a
window of requests at a time (reading its input lazily, so the backlog stays in the caller; the
window follows the number of live workers, so workers on a node that joins get work), yields
results in completion order, and yields each distinct evaluation id at most once across every `run`
of this client (an id given twice, or listed in `skip`, is not submitted). The service is placed on
the driver's node (pinned: it takes no resources, and Ray 2.60 did not honour a soft affinity for
it), so a lost GPU node never takes the queue with it. Plus synchronous views of the service for
drivers and tests (stats, worker ids, handles and nodes, bad nodes, the autoscaler ask, health),
and `prefetch(items)`: the baselines of tasks about to be handed out, measured ahead on idle
workers. Does not verify, schedule or write records itself.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from kgym.contract import EvalRequest, EvalResult
from kgym.farm.farm_config import PoolConfig
from kgym.farm.pool_stats import PoolStats
from ray_cluster.cluster_watch import cluster_plan
from ray_cluster.service import FarmService
from ray_cluster.worker import WorkerHealth

__all__ = ["VerifierPool"]


class VerifierPool:
    """Create with a config (and optionally a `RecordSink` handle the service streams results to),
    then `run(requests)`; `close()` (or a `with` block) stops the service and its workers.

    `VerifierPool.attach(handle)` wraps a service someone else started (an actor gets the handle
    passed in, or `ray.get_actor(name)`); closing an attached client leaves the service running."""

    def __init__(self, config: PoolConfig = PoolConfig(), *, sink: Any = None, name: str | None = None,
                 handle: Any = None):
        self.sink = sink
        self._owner = handle is None
        if handle is None:
            cluster_plan(config)  # a config the cluster cannot serve fails here, as a ValueError
            here = ray.get_runtime_context().get_node_id()
            opts: dict[str, Any] = {"max_concurrency": config.max_waiting,
                                    "scheduling_strategy": NodeAffinitySchedulingStrategy(here, soft=False)}
            if name:
                opts["name"] = name
            handle = FarmService.options(**opts).remote(config, sink)
        self.handle = handle
        self.name = name  # the service's actor name, when this client started it with one
        info = ray.get(handle.describe.remote())
        self._num_workers: int = info["num_workers"]
        self.gpu: bool = info["gpu"]
        self.config: PoolConfig = info["config"]
        self._seen: set[str] = set()  # ids this client submitted (or skipped)
        self._duplicates = 0
        self._final_stats = PoolStats()

    @classmethod
    def attach(cls, handle_or_name: Any, sink: Any = None) -> VerifierPool:
        handle = ray.get_actor(handle_or_name) if isinstance(handle_or_name, str) else handle_or_name
        return cls(sink=sink, handle=handle)

    @property
    def num_workers(self) -> int:
        """Live workers now (the service follows the cluster); after close, the last count seen."""
        if self.handle is not None:
            self._num_workers = ray.get(self.handle.describe.remote())["num_workers"]
        return self._num_workers

    # -- batch ----------------------------------------------------------------------------------
    WINDOW_REFRESH_S = 2.0  # how often `run` re-reads the number of live workers

    def window(self, workers: int | None = None) -> int:
        """Submissions kept outstanding by `run`: twice what the workers hold, so a worker that
        finishes a call finds the next one already queued at the service."""
        workers = self.num_workers if workers is None else workers
        return max(2, 2 * workers * self.config.max_in_flight)

    def run(self, requests: Iterable[EvalRequest], *, skip: Iterable[str] = ()) -> Iterator[EvalResult]:
        """Yield one `EvalResult` per distinct evaluation id of `requests` not in `skip`, as they complete."""
        source = iter(requests)
        skipped = set(skip)
        limit, read_at = self.window(), time.monotonic()
        outstanding: set[Any] = set()
        exhausted = False
        while True:
            if time.monotonic() - read_at > self.WINDOW_REFRESH_S:
                # Workers come and go with the cluster's nodes: the window follows, so a node that
                # joins finds work queued for its workers, and the queue the autoscaler ask reads grows.
                limit, read_at = self.window(), time.monotonic()
            while not exhausted and len(outstanding) < limit:
                req = next(source, None)
                if req is None:
                    exhausted = True
                elif req.evaluation_id in self._seen or req.evaluation_id in skipped:
                    self._duplicates += 1
                else:
                    self._seen.add(req.evaluation_id)
                    outstanding.add(self.handle.submit.remote(req))
            if not outstanding:
                return
            ready, _ = ray.wait(list(outstanding), num_returns=1)
            more, _ = ray.wait([r for r in outstanding if r not in ready], num_returns=len(outstanding) - 1,
                               timeout=0) if len(outstanding) > 1 else ([], [])
            for ref in ready + more:
                outstanding.discard(ref)
                yield ray.get(ref)

    def submit(self, request: EvalRequest) -> Any:
        """The ObjectRef of one submission (`await` it, or `ray.get` it)."""
        return self.handle.submit.remote(request)

    def prefetch(self, items: Iterable[Any]) -> int:
        """Tell the farm what comes next: `BaselineRequest`s (`kgym.farm.baseline_prefetch`) or
        `EvalRequest`s whose baselines the workers measure ahead, while idle (docs/farm.md,
        "Baselines off the candidate's path"). Returns how many items were newly queued."""
        return ray.get(self.handle.prefetch.remote(list(items)))

    def drain(self) -> int:
        """Block until the sink stored every result so far; rows stored since the last drain."""
        return ray.get(self.handle.drain.remote())

    # -- views ----------------------------------------------------------------------------------
    @property
    def stats(self) -> PoolStats:
        """The service's counters (after close: its last ones), plus the ids this client skipped."""
        stats = self._final_stats if self.handle is None else ray.get(self.handle.get_stats.remote())
        stats.duplicates += self._duplicates
        return stats

    def worker_ids(self) -> list[str]:
        return ray.get(self.handle.worker_ids.remote())

    def placement(self) -> dict[str, str]:
        """worker id -> node id, for every live worker."""
        return ray.get(self.handle.placement.remote())

    def bad_nodes(self) -> dict[str, str]:
        """node id -> why, for the nodes the farm marked bad (not used again by it)."""
        return ray.get(self.handle.bad_nodes.remote())

    def autoscale_ask(self) -> int:
        """Worker bundles the farm asks the autoscaler for now (0: none)."""
        return ray.get(self.handle.autoscale_ask.remote())

    def actor(self, worker_id: str) -> Any:
        """The actor handle of a live worker (for tests and operators)."""
        return ray.get(self.handle.worker_actor.remote(worker_id))

    def worker_states(self) -> dict[str, int]:
        """Workers by state (`kgym.metrics.WORKER_STATES`): starting, idle, busy."""
        return ray.get(self.handle.worker_states.remote())

    def health(self, timeout_s: float | None = None) -> list[WorkerHealth]:
        """Probe every worker now (answers even while they verify)."""
        return ray.get(self.handle.health.remote(timeout_s))

    def close(self) -> None:
        """Stop the service (when this client started it): workers killed, sink writes awaited."""
        if not self._owner or self.handle is None:
            return
        handle, self.handle = self.handle, None
        try:
            self._final_stats = ray.get(handle.close.remote(), timeout=120)
        except Exception:  # noqa: BLE001 - a service already gone has nothing left to close
            pass
        try:
            ray.kill(handle, no_restart=True)
        except Exception:  # noqa: BLE001
            pass

    def __enter__(self) -> VerifierPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
