"""The farm on a multi-node Ray cluster on one machine (`ray.cluster_utils.Cluster`: a CPU head and
nodes that declare one fake GPU each; the workers verify on the CPU), the real verifier throughout.

- a node added halfway through a batch: the farm places a worker on it and that worker verifies
  part of the batch; every id ends with one result;
- a node removed halfway (its raylet killed while its worker holds calls): the farm drops the
  node's worker, its calls are retried elsewhere, and every submitted id ends with exactly one
  record in the run's Parquet;
- a queue that grows past the workers: the farm asks the autoscaler for GPU bundles (read back from
  the GCS), and releases the ask once the queue drains; `max_workers` caps placement;
- a node whose worker keeps failing its health probe (its device poisoned, as in test_pool): marked
  bad after `bad_node_failures`, its workers dropped, and no worker is placed there again;
- Prometheus's `ray` job: the service-discovery file Ray writes (its own writer, run against the
  cluster) lists every live node's metrics-export address, and drops a node that left;
- `jobs.verify` on the cluster, its driver SIGKILLed mid-batch and a node lost before the restart:
  the restart resumes, and every id has one row.

The GCS's health check is shortened (500 ms, 4 misses) so a killed raylet is declared dead in
about 2 s. Nodes a test adds are removed when it ends; the cluster is shut down after the module.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch

from farm_helpers import QUICK, REPO, good_and_wrong, kill_once_durable, rows, write_input

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # noqa: E402

from ray_cluster import PoolConfig, RecordsConfig, RecordSink, SinkConfig, VerifierPool, WorkerConfig  # noqa: E402
from ray_cluster.autoscale import standing_request  # noqa: E402

pytestmark = pytest.mark.slow
NODE = {"num_cpus": 1, "num_gpus": 1, "object_store_memory": 80 * 2**20}


def _children() -> set[int]:
    me, out = str(os.getpid()), set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "stat").read_text().rsplit(")", 1)[1].split()[1] == me:
                    out.add(int(d.name))
            except (OSError, IndexError):
                pass
    return out


def add_node(cluster, **args):
    """`cluster.add_node`, tried again when Ray's fixed 30 s wait for a raylet to register runs out on
    a loaded machine; the processes the failed start left are killed (by pid: only this test's)."""
    for attempt in range(3):
        before = _children()
        try:
            return cluster.add_node(**args)
        except Exception as e:
            if "timed out during startup" not in str(e) or attempt == 2:
                raise
            for pid in _children() - before:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if cluster.head_node is not None:
                cluster.wait_for_nodes(timeout=60)


@pytest.fixture(scope="module")
def cluster():
    if ray.is_initialized():  # a Ray another test left up would take the driver's connection
        ray.shutdown()
    c = Cluster()
    try:
        add_node(c, num_cpus=2, num_gpus=0, object_store_memory=120 * 2**20,
                 include_dashboard=False,
                 _system_config={"health_check_period_ms": 500, "health_check_timeout_ms": 1000,
                                 "health_check_failure_threshold": 4,
                                 "agent_register_timeout_ms": 180_000})  # agents start slowly on a loaded machine
        add_node(c, **NODE)  # node A: lives for the whole module
        ray.init(address=c.address, log_to_driver=False)
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


@contextmanager
def extra_nodes(cluster):
    """`add()` starts a node (one fake GPU); every node added is removed on the way out."""
    added = []

    class Nodes:
        @staticmethod
        def add():
            added.append(add_node(cluster, **NODE))
            return added[-1]

    try:
        yield Nodes
    finally:
        for node in added:
            if node in cluster.worker_nodes:
                cluster.remove_node(node, allow_graceful=False)
        cluster.wait_for_nodes()


@contextmanager
def extra_node(cluster):
    with extra_nodes(cluster) as nodes:
        yield nodes.add()


def gpu_config(**kw) -> PoolConfig:
    kw.setdefault("watch_interval_s", 0.5)
    return PoolConfig(use_gpus=True, worker=WorkerConfig(device="cpu", spares=1, verify=dict(QUICK)), **kw)


def head_id() -> str:
    return next(n["NodeID"] for n in ray.nodes() if n["Alive"] and "node:__internal_head__" in n["Resources"])


def _check(results, requests):
    counts = collections.Counter(r.evaluation_id for r in results)
    assert all(n == 1 for n in counts.values()), counts
    by_id = {r.evaluation_id: r for r in results}
    assert set(by_id) == {r.evaluation_id for r in requests}
    for req in requests:
        r = by_id[req.evaluation_id]
        assert r.outcome == ("passed" if req.label == "solution" else "failed"), (req.label, r.verdict.error)
    return by_id


def _wait(cond, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")


def test_a_node_added_halfway_gets_a_worker_that_takes_work(cluster):
    requests = good_and_wrong(range(500, 507))
    with extra_nodes(cluster) as nodes, VerifierPool(gpu_config()) as pool:
        assert pool.num_workers == 1  # one fake GPU in the cluster: node A
        first = set(pool.placement())
        results, new = [], None
        for r in pool.run(requests):
            results.append(r)
            if new is None:  # halfway in: the first result is back, the rest wait behind it
                new = nodes.add()
        placement = pool.placement()
        stats = pool.stats
    _check(results, requests)
    joined = [w for w, n in placement.items() if n == new.node_id]
    assert joined and not set(joined) & first, placement
    assert any(r.worker_id in joined for r in results), [r.worker_id for r in results]
    assert stats.added >= 1 and new.node_id in stats.nodes_joined


def test_a_node_lost_halfway_loses_no_record(cluster, tmp_path):
    requests = good_and_wrong(range(510, 516))
    # The sink lives on the head (as it does under `ray job submit`): a lost GPU node takes no rows with it.
    sink = RecordSink.options(scheduling_strategy=NodeAffinitySchedulingStrategy(head_id(), soft=False)).remote(
        SinkConfig(RecordsConfig(out=str(tmp_path), run_id="lost", job_id="test", flush_rows=1)))
    with extra_node(cluster) as node:
        with VerifierPool(gpu_config(max_workers=1)) as capped:  # the ceiling holds with room for two
            assert capped.num_workers == 1
        with VerifierPool(gpu_config(), sink=sink) as pool:
            assert pool.num_workers == 2
            on_b = {w for w, n in pool.placement().items() if n == node.node_id}
            assert len(on_b) == 1
            # Warm-up until B has answered once: a cold worker on a loaded machine can take so long
            # that A verifies the whole batch alone and B never holds a call when its raylet dies.
            warm = []
            for seed in range(560, 570):
                warm += list(pool.run(good_and_wrong([seed])))
                if any(r.worker_id in on_b for r in warm):
                    break
            assert any(r.worker_id in on_b for r in warm), "node B verified nothing in the warm-up"
            results, killed = [], False
            for r in pool.run(requests):
                results.append(r)
                if not killed and r.worker_id in on_b:  # B answered and holds its next call: kill its raylet
                    node.kill_raylet()
                    killed = True
            assert killed, "node B verified nothing before the batch ended"
            _check(results, requests)
            drained = pool.drain()
            # The GCS declares the node dead ~2 s after its raylet; the farm's watch polls every 0.5 s.
            _wait(lambda: node.node_id in pool.stats.nodes_left, 60, "the farm to see node B leave")
            stats = pool.stats
            assert drained == len(warm) + len(requests) and not stats.sink_errors, (drained, stats.sink_errors)
            placement = pool.placement()
    ray.get(sink.flush.remote())
    recorded = rows(tmp_path / "lost")
    expected = [r.evaluation_id for r in warm] + [r.evaluation_id for r in requests]
    assert sorted(recorded["evaluation_id"]) == sorted(expected)  # each id once
    assert node.node_id in stats.nodes_left
    assert node.node_id not in placement.values()
    assert stats.retried >= 1 and any(w in why for w in on_b for why in stats.dropped_why + stats.replaced_why)
    ray.get(sink.close.remote())


def test_the_queue_asks_the_autoscaler_and_releases_once_drained(cluster):
    assert standing_request() == []
    requests = good_and_wrong(range(520, 523))
    seen: list[list[dict]] = []
    with VerifierPool(gpu_config(max_workers=4, release_after_s=1.0, tick_s=0.2)) as pool:
        assert pool.num_workers == 1
        results = []
        for r in pool.run(requests):
            results.append(r)
            seen.append(standing_request())
        _check(results, requests)
        # With one worker, run() keeps 4 outstanding: 2 on the worker, 2 queued -> one more worker's worth.
        assert {"CPU": 1.0, "GPU": 1.0} in seen[0] and len(seen[0]) == 2, seen
        _wait(lambda: standing_request() == [], 20, "the ask to be released")
        assert pool.autoscale_ask() == 0
        assert pool.stats.autoscale_asks == [2, 0]


def test_a_node_failing_its_probes_is_marked_bad_and_not_used_again(cluster):
    def poison(self):  # the GPU falls off the bus: the device under the verifier cannot compute
        self.verifier.device = torch.device("meta")

    with extra_node(cluster) as node:
        bad = node.node_id
        with VerifierPool(gpu_config(bad_node_failures=2, probe_interval_s=1.0)) as pool:
            assert pool.num_workers == 2
            stop = threading.Event()

            def keep_poisoning():  # every worker placed on that node gets the same bad device
                done: set[str] = set()
                while not stop.is_set():
                    for w, n in pool.placement().items():
                        if n == bad and w not in done:
                            try:
                                ray.get(pool.actor(w).__ray_call__.remote(poison), timeout=60)
                                done.add(w)
                            except Exception:  # noqa: BLE001 - replaced meanwhile
                                pass
                    stop.wait(0.5)

            t = threading.Thread(target=keep_poisoning, daemon=True)
            t.start()
            try:
                why = _wait(lambda: pool.bad_nodes().get(bad), 180, "the node to be marked bad")
            finally:
                stop.set()
                t.join(timeout=60)
            assert "2 health failures" in why and "unhealthy" in why, why
            requests = good_and_wrong(range(530, 533))
            results = list(pool.run(requests))
            time.sleep(2.0)  # several watch intervals: the node is alive, with a free GPU
            placement = pool.placement()
            stats = pool.stats
        _check(results, requests)
        assert bad not in placement.values() and len(placement) == 1, placement
        assert [b.split(":")[0] for b in stats.bad_nodes] == [bad]
        assert {r.worker_id for r in results} <= set(placement)  # the batch ran on node A's worker alone
        alive = ray.remote(lambda: 1).options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(
            bad, soft=False))
        assert ray.get(alive.remote(), timeout=60) == 1  # the node was there all along: left out, not lost


def test_killed_driver_on_the_cluster_resumes_after_a_node_is_lost(cluster, tmp_path):
    ids = write_input(tmp_path / "in.jsonl", range(540, 560))  # 40 rows: 3 workers must not finish them first
    (tmp_path / "job.toml").write_text("\n".join([
        f'input = "{tmp_path / "in.jsonl"}"', 'size = "tiny"', "", "[records]", f'out = "{tmp_path / "out"}"',
        'run_id = "resume"', "flush_rows = 1", "", "[farm]", "use_gpus = false", "workers = 3",
        "max_in_flight = 1", "", "[verify]",  # one call a worker: rows come one by one, not in bursts of 6
        *[f"{k} = {v}" for k, v in QUICK.items()], "", "[ray]", f'address = "{cluster.address}"', ""]))
    cmd = [sys.executable, "-m", "jobs.verify", "--config", str(tmp_path / "job.toml")]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    with extra_node(cluster) as node:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                start_new_session=True)
        try:
            kill_once_durable(proc, tmp_path / "out" / "resume")  # mid-batch, however fast the workers are
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        assert proc.returncode == -signal.SIGKILL, "finished before the kill"
        node.kill_raylet()  # and a node is lost before the restart
    run = tmp_path / "out" / "resume"
    before, deadline = rows(run), time.monotonic() + 20
    while time.monotonic() < deadline:  # the sink may flush its last buffered row a moment after the kill
        time.sleep(3.0)
        now = rows(run)
        if len(now) == len(before):
            break
        before = now
    assert before["evaluation_id"].is_unique and 1 <= len(before) < len(ids), f"{len(before)} of {len(ids)} durable"
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"{len(before)} already recorded" in done.stdout, done.stdout[-2000:]
    after = rows(run)
    assert sorted(after["evaluation_id"]) == sorted(ids)
    kept = after.set_index("evaluation_id").loc[before["evaluation_id"], "recorded_at"]
    assert list(kept) == list(before["recorded_at"])


def test_rays_service_discovery_file_lists_every_node(cluster, tmp_path):
    # Ray's own writer (the one its head's dashboard runs every few seconds), pointed at a temp dir:
    # the file Prometheus's `ray` job reads lists the metrics address of every live node.
    from ray._private.metrics_agent import PrometheusServiceDiscoveryWriter
    from ray._private.ray_constants import PROMETHEUS_SERVICE_DISCOVERY_FILE

    writer = PrometheusServiceDiscoveryWriter(cluster.address, str(tmp_path), str(tmp_path))
    with extra_node(cluster) as node:
        writer.write()
        entries = json.loads((tmp_path / PROMETHEUS_SERVICE_DISCOVERY_FILE).read_text())
        want = {f"{n['NodeManagerAddress']}:{n['MetricsExportPort']}" for n in ray.nodes() if n["Alive"]}
        assert len(want) == 3  # the head, node A and the node just added, each with its own metrics agent
        assert {t for e in entries for t in e["targets"]} >= want and entries[0]["labels"] == {"job": "ray"}
        gone = f"{node.address_info['node_ip_address']}:{node.address_info['metrics_export_port']}"
        assert gone in want
    writer.write()  # the node was removed: its address leaves the file
    entries = json.loads((tmp_path / PROMETHEUS_SERVICE_DISCOVERY_FILE).read_text())
    assert gone not in {t for e in entries for t in e["targets"]}
