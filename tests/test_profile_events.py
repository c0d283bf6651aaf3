"""`profile_events.events` gives the profiler's audit the events and tree torch's `prof.events()` gives:
the same events in the same order, each with the same name, device, stream, thread and async flag,
the same CPU parent and the same children, on profiles of nested, threaded, annotated, guarded
(the child's dispatch mode) and repeated forwards; and the audit's findings are the same on both."""

import threading

import pytest
import torch
from torch.profiler import ProfilerActivity, profile, record_function

from kgym.verify.candidate import profile_events
from kgym.verify.candidate.guard import ComputeGuard, forbidden_profiled_ops
from kgym.verify.candidate.launches import device_kernel_names, working_streams


def _profiler(device: str):
    from torch._C._profiler import _ExperimentalConfig

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    return profile(activities=acts, experimental_config=_ExperimentalConfig(profile_all_threads=True))


def _shape(evts) -> list[tuple]:
    index = {id(e): i for i, e in enumerate(evts)}
    return [(e.name, str(e.device_type), e.device_resource_id, e.device_index, e.thread, bool(e.is_async),
             index.get(id(e.cpu_parent)) if e.cpu_parent is not None else None,
             [index.get(id(c)) for c in e.cpu_children]) for e in evts]


def _forwards(device: str) -> None:
    x = torch.randn(64, 33, device=device)
    w = torch.randn(17, 33, device=device)
    for _ in range(3):
        torch.nn.functional.linear(x, w).relu().sum()  # composite ops over their parts
        x.clone().add_(1).copy_(x)
        with record_function("outer"), record_function("outer"), record_function("inner"):
            torch.mul(x, 2)  # a parent with one child of its own name is merged with it
        with record_function("same"):
            with record_function("same"):
                pass
            torch.exp(x)
    t = threading.Thread(target=lambda: torch.softmax(x, -1))
    t.start()
    t.join()
    with ComputeGuard(False, device):  # the dispatch guard's PythonDispatchMode ranges
        torch.empty(4, device=device).fill_(0).clone()
        y = torch.empty_like(x)
        y.copy_(x)
        try:
            torch.add(x, 1)
        except Exception:  # noqa: BLE001 - refused by the guard: the profile keeps the attempt
            pass


def _check(device: str) -> None:
    prof = _profiler(device)
    with prof:
        _forwards(device)
        if device == "cuda":
            torch.cuda.synchronize()
    light = profile_events.events(prof)
    full = list(prof.events())
    assert len(light) > 50
    assert _shape(light) == _shape(full)
    for hybrid in (False, True):
        assert forbidden_profiled_ops(light, hybrid) == forbidden_profiled_ops(full, hybrid)
    assert device_kernel_names(light) == device_kernel_names(full)
    assert working_streams(light) == working_streams(full)
    assert forbidden_profiled_ops(light, False)[0]  # the profile holds compute the audit refuses


def test_the_same_events_and_tree_as_torch():
    _check("cpu")


def test_a_profile_with_memory_records_is_torchs_own():
    prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
    with prof:
        torch.randn(1000).clone()
    light = profile_events.events(prof)
    assert _shape(light) == _shape(list(prof.events()))
    assert type(light[0]) is not profile_events.Event


@pytest.mark.gpu
def test_the_same_events_and_tree_as_torch_on_a_gpu():
    _check("cuda")


def test_a_profile_it_cannot_read_is_torchs_own(monkeypatch):
    prof = _profiler("cpu")
    with prof:
        torch.randn(100).clone()

    def broken(p):
        raise AttributeError("another torch")

    monkeypatch.setattr(profile_events, "_events", broken)
    got = profile_events.events(prof)
    assert _shape(got) == _shape(list(prof.events())) and type(got[0]) is not profile_events.Event
