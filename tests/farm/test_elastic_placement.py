"""The elastic farm's rules without a cluster (and without Ray: they are `kgym.farm`'s):
`PoolConfig`'s worker bounds (bad values refused with a message naming the field and the fix),
`placement.plan` (one worker per GPU, spread across nodes under a ceiling, live workers never moved,
bad nodes left out), `NodeHealth` (a node marked bad after N health failures, once), `NodeWatch`
(which nodes joined or left between two reads of the cluster), and `ResourceAsk`'s arithmetic of
how many workers to ask for, when, and when the ask is released."""

from __future__ import annotations

import pytest

from kgym.farm.farm_config import PoolConfig
from kgym.farm.node_watch import NodeWatch
from kgym.farm.placement import NodeHealth, NodeView, capacity, decide_gpu, plan
from kgym.farm.resource_ask import ResourceAsk


def _nodes(*specs: tuple[str, float, float]) -> dict[str, NodeView]:
    return {i: NodeView(node_id=i, address="10.0.0.1", gpus=g, cpus=c) for i, g, c in specs}


@pytest.mark.parametrize(("kw", "needle"), [
    ({"min_workers": 3, "max_workers": 2}, "min_workers=3: is more than max_workers=2"),
    ({"max_workers": 0}, "max_workers=0"),
    ({"min_workers": -1}, "min_workers=-1"),
    ({"workers": 0}, "workers=0"),
    ({"workers": 2, "max_workers": 3}, "set either workers or min_workers/max_workers"),
    ({"bad_node_failures": 0}, "bad_node_failures=0"),
    ({"watch_interval_s": 0}, "watch_interval_s=0"),
    ({"max_in_flight": 0}, "max_in_flight=0"),
    ({"cpus_per_worker": 0}, "cpus_per_worker=0"),
])
def test_pool_config_refuses_bad_worker_bounds(kw, needle):
    with pytest.raises(ValueError, match="PoolConfig") as e:
        PoolConfig(**kw)
    assert needle in str(e.value)


def test_worker_bounds_shorthand():
    assert (PoolConfig(workers=3).floor, PoolConfig(workers=3).ceiling) == (3, 3)
    assert (PoolConfig(min_workers=1, max_workers=5).floor, PoolConfig(min_workers=1, max_workers=5).ceiling) == (1, 5)
    assert PoolConfig(workers=2, min_workers=2, max_workers=2).ceiling == 2  # consistent: accepted


def test_one_worker_per_gpu_and_cpus_bound_it():
    gpu8 = NodeView("a", "x", gpus=8, cpus=192)
    assert capacity(gpu8, gpu=True, cpus_per_worker=1) == 8
    assert capacity(NodeView("b", "x", gpus=8, cpus=4), gpu=True, cpus_per_worker=1) == 4  # CPUs run out first
    assert capacity(NodeView("h", "x", gpus=0, cpus=16), gpu=True, cpus_per_worker=1) == 0  # the CPU head: none
    assert capacity(NodeView("h", "x", gpus=0, cpus=3), gpu=False, cpus_per_worker=1) == 3
    assert capacity(NodeView("h", "x", gpus=0, cpus=3), gpu=False, cpus_per_worker=2) == 1


def test_plan_spreads_under_a_ceiling_and_keeps_live_workers():
    nodes = _nodes(("head", 0, 16), ("n1", 2, 8), ("n2", 2, 8), ("n3", 2, 8))
    assert plan(nodes, {}, gpu=True, cpus_per_worker=1, ceiling=None) == {"n1": 2, "n2": 2, "n3": 2}
    assert plan(nodes, {}, gpu=True, cpus_per_worker=1, ceiling=3) == {"n1": 1, "n2": 1, "n3": 1}
    # a node joins a farm at its ceiling: nothing moves to it
    assert plan(nodes, {"n1": 2}, gpu=True, cpus_per_worker=1, ceiling=2) == {"n1": 2}
    # a node left (not in `nodes`): its workers do not count, the room goes to the others
    assert plan(_nodes(("n2", 2, 8)), {"n1": 2}, gpu=True, cpus_per_worker=1, ceiling=2) == {"n2": 2}
    # a bad node gets nothing, even with room
    assert plan(nodes, {}, gpu=True, cpus_per_worker=1, ceiling=None, bad={"n2": "probe"}) == {"n1": 2, "n3": 2}


def test_gpu_workers_need_a_gpu_node():
    with pytest.raises(ValueError, match="no live node of the Ray cluster has a GPU.*use_gpus=false"):
        decide_gpu(True, _nodes(("head", 0, 4)))
    assert decide_gpu(None, _nodes(("head", 0, 4))) is False
    assert decide_gpu(None, _nodes(("head", 0, 4), ("g", 1, 4))) is True
    assert decide_gpu(False, _nodes(("g", 1, 4))) is False


def test_node_health_marks_a_node_bad_once():
    h = NodeHealth(bad_after=2)
    assert h.failure("n1", "w0: unhealthy") is False and not h.is_bad("n1")
    assert h.failure("n2", "w1: unhealthy") is False
    assert h.failure("n1", "w0.1: unhealthy") is True and h.is_bad("n1") and not h.is_bad("n2")
    assert "2 health failures" in h.bad["n1"] and "w0.1" in h.bad["n1"]
    assert h.failure("n1", "again") is False  # marked once


def _refuse(bundles):
    raise AssertionError("no ask expected")


def test_node_watch_reports_joins_and_leaves_after_the_first_view():
    a, b, c = (NodeView(i, f"10.0.0.{n}", gpus=1, cpus=4) for n, i in enumerate("abc"))
    views = iter([{"a": a, "b": b}, {"a": a, "b": b}, {"a": a, "c": c}, {"c": c}, {"b": b, "c": c}])
    watch = NodeWatch(read=lambda: next(views))
    assert watch.poll() == ([], [])  # the starting view: nothing joined or left
    assert watch.alive("a") and watch.alive("b") and not watch.alive("c")
    assert watch.poll() == ([], [])
    assert watch.poll() == (["c"], ["b"])
    assert watch.poll() == ([], ["a"])
    assert watch.poll() == (["b"], [])  # a node back under its id is reported again
    assert (watch.joined, watch.left) == (["c", "b"], ["b", "a"])
    assert set(watch.nodes) == {"b", "c"} and not watch.alive("a")


def test_resource_ask_arithmetic():
    ask = ResourceAsk(bundle={"CPU": 1, "GPU": 1}, request=_refuse, min_workers=0, ceiling=8, max_in_flight=2,
                      release_after_s=5)
    assert ask.want(queued=0, workers=2) == 2
    assert ask.want(queued=4, workers=2) == 4  # two more workers' worth waits
    assert ask.want(queued=5, workers=2) == 5
    assert ask.want(queued=100, workers=2) == 8  # the ceiling
    assert ResourceAsk(bundle={}, request=_refuse, min_workers=3, ceiling=None, max_in_flight=2,
                       release_after_s=5).want(0, 1) == 3


def test_resource_ask_grows_while_work_queues_and_is_released_when_idle():
    asks: list[list[dict[str, float]]] = []
    ask = ResourceAsk(bundle={"CPU": 1, "GPU": 1}, request=asks.append, min_workers=1, ceiling=8, max_in_flight=2,
                      release_after_s=5)
    ask.update(queued=4, pending=6, workers=2, now=0.0)
    assert ask.asked == 4 and asks[-1] == [{"CPU": 1, "GPU": 1}] * 4
    ask.update(queued=1, pending=3, workers=4, now=1.0)  # wants 5: more than asked, so asked
    ask.update(queued=1, pending=3, workers=2, now=2.0)  # wants 3: never fewer while work queues
    assert ask.history == [4, 5]
    ask.update(queued=0, pending=2, workers=5, now=3.0)  # running, not queued: the ask stands
    ask.update(queued=0, pending=0, workers=5, now=4.0)  # idle from here
    ask.update(queued=0, pending=0, workers=5, now=8.9)
    assert ask.history == [4, 5]
    ask.update(queued=0, pending=0, workers=5, now=9.0)  # idle for release_after_s: back to min_workers
    assert ask.history == [4, 5, 1] and len(asks[-1]) == 1
    ask.release()
    assert ask.history == [4, 5, 1, 0] and asks[-1] == []


def test_a_failed_ask_leaves_the_ask_as_it_was():
    def request_resources(bundles):
        raise RuntimeError("autoscaler down")

    ask = ResourceAsk(bundle={"CPU": 1}, request=request_resources, min_workers=0, ceiling=None, max_in_flight=1,
                      release_after_s=5)
    ask.update(queued=3, pending=3, workers=0, now=0.0)
    assert ask.asked == 0 and ask.history == []
    assert ask.errors == ["request_resources(3 bundles): RuntimeError: autoscaler down"]
