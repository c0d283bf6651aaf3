"""`FarmService`: the verifier farm as an async Ray actor. `await service.submit.remote(request)` from
any driver or actor gives that evaluation's `EvalResult`.

Covers placing workers (one per GPU with `num_gpus=1`, each pinned to its node; one per CPU slot
where the cluster has no GPU), following the cluster as nodes join and leave, feeding the workers
from one queue with a bounded number of calls in flight per worker (backpressure: the rest wait in
the queue, retries first), asking the autoscaler for more while work queues, and the farm's failure
handling. The rules on plain values are the library's, without Ray (`kgym.farm`): the queue, the
retries, exactly-once keeping and who gets the next call are `ledger.EvalLedger`'s, where workers go
`placement`'s, when to ask the autoscaler `resource_ask.ResourceAsk`'s, which nodes came and went
`node_watch.NodeWatch`'s; this actor holds the workers and the clock, and makes the calls those
decide.

- a worker that dies (`RayActorError`), stops answering within `call_timeout_s`, fails to start
  within `start_timeout_s` or fails its health probe is killed and replaced by a fresh one; its
  calls in flight go back to the front of the queue;
- a reply whose verdict carries `error` (a failure of kgym, not of the kernel), or an exception out
  of the worker's method, is retried, up to `max_attempts` calls per evaluation; after that the
  result has outcome "error" (`kgym.farm.ledger.give_up_result`); a retry goes to another worker
  than the ones that failed it while one is live, and a worker that failed a call is probed at once;
- a kernel's verdict (timeout and crash included) is never retried;
- a node that leaves (its raylet stopped, the GCS declares it dead) takes its workers with it: they
  are dropped, not replaced there, and their calls go back to the queue as a dead worker's do; a
  node that joins gets one worker per GPU (`kgym.farm.placement`), up to `max_workers`;
- a node whose workers fail their health probe `bad_node_failures` times is marked bad: its
  workers are dropped and it gets none for the rest of this service's life;
- queued work with no worker at all for `start_timeout_s` (every node gone or bad) is given up.

Exactly once: results are keyed by evaluation id. An id submitted while it is queued or running
waits for the same verification; an id submitted after it finished gets the kept result at once.
The last `kept_results` results asked for are kept (least recently used dropped first), so a long RL
run's service does not grow without bound; an id resubmitted after its result was dropped is verified
again, and the RecordSink still stores one row for it (the first).
With a `RecordSink`, each result is sent to it once as it completes (`write_results`), so episode
evaluations get rows as batch ones do, and the sink's queue-depth and worker gauges follow the
service. `drain()` waits until the sink holds every result sent so far.

Order of events for one call: queued -> dispatched to the least-loaded worker with room -> the
reply is awaited by its own task -> on success the result is emitted (kept, callers woken, sent to
the sink) and the queue is served again; a monitor task checks deadlines and probes every `tick_s`,
updates the autoscaler ask (`ResourceAsk`, through `autoscale.py`), and every `watch_interval_s`
reads the cluster's nodes (`NodeWatch`, through `cluster_watch.py`) and drops or places workers to
match. A lost worker triggers the same read at once, so a worker of a dead node is not started again
there.
Every method runs on the actor's one event loop (one concurrency group), so no state is shared
across threads. Does not build requests, score verdicts or know who submits (a batch job's client
in `pool.py`, an episode's `FarmEvaluator` in `farm_evaluator.py`).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import secrets
import time
from dataclasses import dataclass, field, replace
from typing import Any

import ray
from ray.exceptions import RayActorError, RayError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from kgym.contract import EvalRequest, EvalResult, WorkerReply
from kgym.farm.farm_config import PoolConfig
from kgym.farm.ledger import Call, EvalLedger, give_up_result
from kgym.farm.node_watch import NodeWatch
from kgym.farm.placement import NodeHealth, decide_gpu, plan
from kgym.farm.pool_stats import PoolStats
from kgym.farm.resource_ask import ResourceAsk
from ray_cluster.autoscale import request_resources
from ray_cluster.cluster_watch import live_nodes
from ray_cluster.worker import VerifierWorker, WorkerHealth

__all__ = ["FarmService"]


@dataclass
class _Slot:
    index: int
    worker_id: str
    actor: Any
    node_id: str
    inflight: dict[Any, Call] = field(default_factory=dict)  # ObjectRef -> call, in dispatch order
    ready_ref: Any = None  # pending ready() call; None once the worker answered
    started: float = 0.0
    probe_ref: Any = None
    probe_sent: float = 0.0
    last_probe: float = 0.0
    last_reply: float = 0.0  # when the worker last finished a call (or started)
    health: WorkerHealth | None = None


@ray.remote(num_cpus=0, max_restarts=0, max_task_retries=0)
class FarmService:
    def __init__(self, config: PoolConfig = PoolConfig(), sink: Any = None):
        worker = config.worker
        if worker.case_secret is None:  # one secret for the whole farm, so a retry sees the same cases
            worker = replace(worker, case_secret=secrets.token_bytes(32))
        self.config = replace(config, worker=worker)
        self.sink = sink
        self.stats = PoolStats()
        self._watch = NodeWatch(read=live_nodes)
        self._watch.poll()
        self.gpu = decide_gpu(self.config.use_gpus, self._watch.nodes)
        self._health = NodeHealth(bad_after=self.config.bad_node_failures)
        bundle = {"CPU": self.config.cpus_per_worker, **({"GPU": 1} if self.gpu else {})}
        self._ask = ResourceAsk(bundle=bundle, request=request_resources, min_workers=self.config.floor,
                                ceiling=self.config.ceiling, max_in_flight=self.config.max_in_flight,
                                release_after_s=self.config.release_after_s)
        self._ledger = EvalLedger(max_attempts=self.config.max_attempts, max_in_flight=self.config.max_in_flight,
                                  kept_results=self.config.kept_results, stats=self.stats)
        self._generation: collections.Counter[int] = collections.Counter()
        self._next_index = 0
        self._tasks: set[asyncio.Task] = set()
        self._sink_writes: set[asyncio.Task] = set()
        self._rows_at_drain = 0
        self._gauges: tuple | None = None
        self._monitor: asyncio.Task | None = None
        self._closed = False
        self._last_watch = time.monotonic()
        self._no_worker_since: float | None = None
        self._slots: dict[int, _Slot] = {}  # index -> the live worker there
        self._place(initial=True)

    # -- the service's face ---------------------------------------------------------------------
    async def submit(self, request: EvalRequest) -> EvalResult:
        """The result of `request`'s evaluation id: verified once, however often it is submitted."""
        self._start()
        done = self._ledger.kept(request.evaluation_id)
        if done is not None:
            return done
        if self._closed:
            return give_up_result(request, 0, ["the farm is closed"], 0.0)
        fut, queued = self._ledger.wait(request)
        if queued:
            self._dispatch()
        # shield: one caller that gives up (a cancelled Ray task) must not cancel the others' wait
        return await asyncio.shield(fut)

    async def describe(self) -> dict[str, Any]:
        """num_workers (live now), gpu, and the config in use (its case secret left out)."""
        self._start()
        return {"num_workers": len(self._slots), "gpu": self.gpu,
                "config": replace(self.config, worker=replace(self.config.worker, case_secret=None))}

    async def placement(self) -> dict[str, str]:
        """worker id -> the node id it is pinned to, for every live worker."""
        return {s.worker_id: s.node_id for s in self._ordered()}

    async def bad_nodes(self) -> dict[str, str]:
        """node id -> why, for the nodes this farm marked bad."""
        return dict(self._health.bad)

    async def autoscale_ask(self) -> int:
        """Worker bundles the farm asks the autoscaler for now (0: none)."""
        return self._ask.asked

    async def prefetch(self, items: list[Any]) -> int:
        """Tell the farm which tasks come next (`BaselineRequest`s of `kgym.farm.baseline_prefetch`, or
        `EvalRequest`s): their baselines are measured ahead, while workers are idle, by one worker per
        node (the baseline cache is per node and GPU model), spread over each node's workers. Returns
        how many items were newly queued at workers."""
        from kgym.farm.baseline_prefetch import as_baseline_request

        self._start()
        requests = [as_baseline_request(x) for x in items]
        by_node: dict[Any, list[_Slot]] = {}
        for slot in self._ordered():
            by_node.setdefault(_node_of(slot), []).append(slot)
        batches: dict[str, tuple[Any, list]] = {}
        for i, req in enumerate(requests):
            for slots in by_node.values():
                slot = slots[i % len(slots)]
                batches.setdefault(slot.worker_id, (slot.actor, []))[1].append(req)
        counts = await asyncio.gather(*(actor.prefetch.remote(batch) for actor, batch in batches.values()),
                                      return_exceptions=True)  # a worker lost meanwhile loses only its share
        return sum(c for c in counts if isinstance(c, int))

    async def get_stats(self) -> PoolStats:
        self.stats.autoscale_asks = list(self._ask.history)
        self.stats.autoscale_errors = list(self._ask.errors)
        self.stats.nodes_joined, self.stats.nodes_left = list(self._watch.joined), list(self._watch.left)
        return dataclasses.replace(self.stats, **{f.name: list(getattr(self.stats, f.name))
                                                  for f in dataclasses.fields(PoolStats)
                                                  if isinstance(getattr(self.stats, f.name), list)})

    async def worker_ids(self) -> list[str]:
        return [s.worker_id for s in self._ordered()]

    async def worker_actor(self, worker_id: str) -> Any:
        """The actor handle of a live worker (for tests and operators)."""
        return next(s.actor for s in self._slots.values() if s.worker_id == worker_id)

    async def worker_states(self) -> dict[str, int]:
        """Workers by state (`kgym.metrics.WORKER_STATES`): starting, idle, busy."""
        self._start()
        return self._worker_states()

    async def pending(self) -> int:
        """Evaluation ids queued or running."""
        return self._ledger.pending

    async def health(self, timeout_s: float | None = None) -> list[WorkerHealth]:
        """Probe every worker now (they answer even while they verify)."""
        refs = [s.actor.health.remote() for s in self._ordered()]
        return list(await asyncio.wait_for(asyncio.gather(*refs), timeout_s or self.config.probe_timeout_s))

    async def drain(self) -> int:
        """Wait until every result sent to the sink so far is stored; rows stored since the last drain."""
        while self._sink_writes:
            await asyncio.gather(*list(self._sink_writes), return_exceptions=True)
        self._push_gauges(force=True)
        new, self._rows_at_drain = self.stats.sink_rows - self._rows_at_drain, self.stats.sink_rows
        return new

    async def close(self) -> PoolStats:
        """Kill the workers; callers still waiting get a give-up result (outcome error, sent to the
        sink too, so the next run retries them); waits for the sink's writes."""
        self._closed = True
        for call in self._ledger.take_queued():
            self._emit(give_up_result(call.request, call.attempt, call.errors + ["the farm closed"], 0.0))
        for slot in self._slots.values():
            for call in slot.inflight.values():
                self._emit(give_up_result(call.request, call.attempt, call.errors + ["the farm closed"], 0.0))
            slot.inflight.clear()
            _kill(slot.actor)
        self._ask.release()
        if self._monitor is not None:
            self._monitor.cancel()
        for t in list(self._tasks):
            t.cancel()
        await self.drain()
        return await self.get_stats()

    # -- workers --------------------------------------------------------------------------------
    def _ordered(self) -> list[_Slot]:
        return [self._slots[i] for i in sorted(self._slots)]

    def _spawn(self, index: int, node_id: str) -> _Slot:
        gen = self._generation[index]
        self._generation[index] += 1
        worker_id = f"w{index}" + (f".{gen}" if gen else "")
        # Pinned (soft=False): the worker runs on the node placement chose, or fails to start (a node
        # gone meanwhile), never silently elsewhere, so the farm always knows which node holds what.
        gpus = self.config.gpus_per_worker if self.gpu else 0
        actor = VerifierWorker.options(num_cpus=self.config.cpus_per_worker, num_gpus=gpus,
                                       scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False)
                                       ).remote(worker_id, self.config.worker, self.sink)
        now = time.monotonic()
        slot = _Slot(index=index, worker_id=worker_id, actor=actor, node_id=node_id, ready_ref=actor.ready.remote(),
                     started=now, last_probe=now, last_reply=now)
        if self._monitor is not None:  # else _start() watches it, once the event loop runs
            self._task(self._watch_ready(slot))
        return slot

    def _current(self, slot: _Slot) -> bool:
        return not self._closed and self._slots.get(slot.index) is slot

    def _follow_cluster(self) -> None:
        """Read the cluster's nodes; drop the workers of nodes that left, place workers on new ones."""
        self._last_watch = time.monotonic()
        self._watch.poll()
        self._place()

    def _place(self, initial: bool = False) -> None:
        for slot in self._ordered():
            if not self._watch.alive(slot.node_id):
                self._drop(slot, f"node {slot.node_id[:8]} left the cluster")
            elif self._health.is_bad(slot.node_id):
                self._drop(slot, f"node {slot.node_id[:8]} is marked bad")
        if self._closed:
            return
        current = collections.Counter(s.node_id for s in self._slots.values())
        targets = plan(self._watch.nodes, current, gpu=self.gpu, cpus_per_worker=self.config.cpus_per_worker,
                       ceiling=self.config.ceiling, bad=self._health.bad, gpus_per_worker=self.config.gpus_per_worker)
        for node_id in sorted(targets):
            for _ in range(targets[node_id] - current.get(node_id, 0)):
                index, self._next_index = self._next_index, self._next_index + 1
                self._slots[index] = self._spawn(index, node_id)
                if not initial:
                    self.stats.added += 1
        if not initial:
            self._dispatch()

    def _drop(self, slot: _Slot, why: str) -> None:
        """Remove a worker for good (its node left or is bad); its calls go back to the queue."""
        if not self._current(slot):
            return
        _kill(slot.actor)
        del self._slots[slot.index]
        self._requeue(slot, why)
        self.stats.dropped += 1
        self.stats.dropped_why.append(f"{slot.worker_id}: {why}")

    def _requeue(self, slot: _Slot, why: str) -> None:
        for call in reversed(list(slot.inflight.values())):
            self._ledger.failed(call, slot.worker_id, why)
            self._retry_or_give_up(call)
        slot.inflight.clear()

    def _replace(self, slot: _Slot, why: str, *, health: bool = False) -> None:
        """Kill a worker, put its calls back in the queue (a farm failure for each), and start another
        on its node; or, when the node has left or (`health`: a failed probe) is now marked bad, not."""
        if not self._current(slot):
            return
        _kill(slot.actor)
        del self._slots[slot.index]
        self._requeue(slot, why)
        self._last_watch = time.monotonic()
        self._watch.poll()  # a lost worker is often the first sign of a lost node
        node = slot.node_id
        if health and self._watch.alive(node) and self._health.failure(node, f"{slot.worker_id}: {why}"):
            self.stats.bad_nodes.append(f"{node}: {self._health.bad[node]}")
        if self._watch.alive(node) and not self._health.is_bad(node):
            self.stats.replaced += 1
            self.stats.replaced_why.append(f"{slot.worker_id}: {why}")
            self._slots[slot.index] = self._spawn(slot.index, node)
        else:
            self.stats.dropped += 1
            self.stats.dropped_why.append(f"{slot.worker_id}: {why}")
        self._place()  # the rest of a bad node's workers go, and room freed elsewhere is used
        self._dispatch()

    def _worker_states(self) -> dict[str, int]:
        counts: collections.Counter[str] = collections.Counter()
        for s in self._slots.values():
            counts["starting" if s.ready_ref is not None else ("busy" if s.inflight else "idle")] += 1
        return dict(counts)

    # -- the loop -------------------------------------------------------------------------------
    def _task(self, coro: Any) -> asyncio.Task:
        t = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)
        return t

    def _start(self) -> None:
        """Start the monitor and the workers' ready watchers on the first call (the constructor
        runs before the actor's event loop does)."""
        if self._monitor is None and not self._closed:
            self._monitor = asyncio.get_running_loop().create_task(self._monitor_loop())
            for slot in self._ordered():
                if slot.ready_ref is not None:
                    self._task(self._watch_ready(slot))

    def _dispatch(self) -> None:
        """Give queued calls to workers with room (the ledger decides who gets which)."""
        slots = {slot.worker_id: slot for slot in self._ordered()}
        loads = [(worker_id, len(slot.inflight)) for worker_id, slot in slots.items()]
        for worker_id, call in self._ledger.assign(loads, time.monotonic()):
            slot = slots[worker_id]
            if not slot.inflight:
                slot.last_reply = call.submitted  # the worker's clock for this call starts now
            ref = slot.actor.verify.remote(call.request)
            slot.inflight[ref] = call
            self._task(self._await_call(slot, ref, call))

    async def _await_call(self, slot: _Slot, ref: Any, call: Call) -> None:
        try:
            reply: WorkerReply = await ref
        except RayActorError as e:
            if self._current(slot) and ref in slot.inflight:
                self._replace(slot, f"worker died: {type(e).__name__}")  # requeues this call too
            return
        except RayError as e:  # an exception in the actor's method: kgym's failure, retried
            if slot.inflight.pop(ref, None) is None or not self._current(slot):
                return  # the worker was replaced meanwhile, and this call requeued with its others
            slot.last_reply = time.monotonic()
            self._ledger.failed(call, slot.worker_id, f"{type(e).__name__}: {str(e)[:500]}")
            self._retry_or_give_up(call)
            self._probe(slot)
            self._dispatch()
            return
        if slot.inflight.pop(ref, None) is None or not self._current(slot):
            return  # requeued when the worker was replaced; the retry's answer counts
        now = time.monotonic()
        slot.last_reply = now
        if reply.farm_error is not None:
            self._probe(slot)
        result = self._ledger.answered(call, reply, slot.worker_id, now)
        if result is not None:  # else the farm's failure, queued again (retries first)
            self._emit(result)
        self._dispatch()

    def _retry_or_give_up(self, call: Call) -> None:
        result = self._ledger.retry_or_give_up(call, time.monotonic())
        if result is not None:
            self._emit(result)

    def _emit(self, result: EvalResult) -> None:
        """Kept once (the ledger), callers woken, and sent to the sink."""
        if not self._ledger.complete(result):
            return
        if self.sink is not None:
            write = asyncio.get_running_loop().create_task(self._write(result))
            self._sink_writes.add(write)
            write.add_done_callback(self._sink_writes.discard)

    async def _write(self, result: EvalResult) -> None:
        try:
            # Awaited first: `self.stats.sink_rows += await ...` reads the counter before the await,
            # and two writes completing meanwhile would lose one of the counts.
            stored = await self.sink.write_results.remote([result])
            self.stats.sink_rows += stored
        except Exception as e:  # noqa: BLE001 - the verdict stands; the row is the sink's failure
            self.stats.sink_errors.append(f"{result.evaluation_id}: {type(e).__name__}: {str(e)[:300]}")

    def _push_gauges(self, force: bool = False) -> None:
        """Queue depth (ids queued or running) and workers by state, to the sink when they change."""
        if self.sink is None:
            return
        gauges = (self._ledger.pending, tuple(sorted(self._worker_states().items())))
        if force or gauges != self._gauges:
            self._gauges = gauges
            self.sink.set_queue_depth.remote(gauges[0])
            self.sink.set_workers.remote(dict(gauges[1]))

    async def _watch_ready(self, slot: _Slot) -> None:
        try:
            health = await slot.ready_ref
        except RayError as e:
            self._replace(slot, f"worker failed to start: {type(e).__name__}: {str(e)[:300]}", health=True)
            return
        if not self._current(slot):
            return
        slot.ready_ref = None
        slot.health = health
        slot.last_probe = time.monotonic()
        if not health.ok:
            self._replace(slot, "unhealthy at start: " + "; ".join(health.problems), health=True)

    def _probe(self, slot: _Slot) -> None:
        if slot.probe_ref is None and slot.ready_ref is None and self._current(slot):
            slot.probe_ref = slot.actor.health.remote()
            slot.probe_sent = time.monotonic()
            self._task(self._watch_probe(slot, slot.probe_ref))

    async def _watch_probe(self, slot: _Slot, ref: Any) -> None:
        try:
            health = await ref
        except RayActorError as e:
            self._replace(slot, f"worker died: {type(e).__name__}")
            return
        except RayError as e:
            self._replace(slot, f"health probe failed: {type(e).__name__}: {str(e)[:300]}", health=True)
            return
        if not self._current(slot) or slot.probe_ref is not ref:
            return
        slot.probe_ref = None
        slot.last_probe = time.monotonic()
        slot.health = health
        if not health.ok:
            self._replace(slot, "unhealthy: " + "; ".join(health.problems), health=True)

    async def _monitor_loop(self) -> None:
        while not self._closed:
            await asyncio.sleep(self.config.tick_s)
            if time.monotonic() - self._last_watch >= self.config.watch_interval_s:
                self._follow_cluster()
            self._check_deadlines()
            self._dispatch()
            if self.config.autoscale and not self._closed:
                self._ask.update(queued=self._ledger.queued, pending=self._ledger.pending, workers=len(self._slots))
            self._push_gauges()

    def _check_deadlines(self) -> None:
        now = time.monotonic()
        self._check_no_worker(now)
        for slot in self._ordered():
            if not self._current(slot):
                continue  # replaced while this loop ran (a bad node's other workers)
            if slot.ready_ref is not None:
                if now - slot.started > self.config.start_timeout_s:
                    self._replace(slot, f"did not start within {self.config.start_timeout_s:g} s")
                continue
            if slot.probe_ref is not None and now - slot.probe_sent > self.config.probe_timeout_s:
                self._replace(slot, f"health probe unanswered for {self.config.probe_timeout_s:g} s", health=True)
                continue
            if slot.inflight and now - slot.last_reply > self.config.call_timeout_s:
                self._replace(slot, f"a call ran past {self.config.call_timeout_s:g} s")
                continue
            if now - slot.last_probe > self.config.probe_interval_s:
                self._probe(slot)
                slot.last_probe = now

    def _check_no_worker(self, now: float) -> None:
        """Queued work and no worker at all (every node gone or bad) for start_timeout_s: given up."""
        if self._slots or not self._ledger.queued:
            self._no_worker_since = None
            return
        if self._no_worker_since is None:
            self._no_worker_since = now
            return
        if now - self._no_worker_since < self.config.start_timeout_s:
            return
        kind = "GPU" if self.gpu else "CPU"
        bad = "; ".join(f"{n[:8]}: {why}" for n, why in self._health.bad.items()) or "none"
        why = (f"no verifier worker for {self.config.start_timeout_s:g} s: the cluster has no usable {kind} node "
               f"(live nodes {len(self._watch.nodes)}, marked bad: {bad}); add {kind} nodes or check the autoscaler")
        for call in self._ledger.take_queued():
            self.stats.gave_up += 1
            self._emit(give_up_result(call.request, call.attempt, call.errors + [why], 0.0))
        self._no_worker_since = None


def _node_of(slot: Any) -> Any:
    """The node a worker runs on, as far as the farm knows it (None while it starts)."""
    node = getattr(slot, "node_id", None)
    return node if node else (slot.health.host if slot.health is not None else None)


def _kill(actor: Any) -> None:
    try:
        ray.kill(actor, no_restart=True)
    except Exception:  # noqa: BLE001 - already gone
        pass
