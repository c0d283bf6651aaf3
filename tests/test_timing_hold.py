"""The hold before each timed run's start event (`kgym.verify.timing.Hold`) grows to cover the call's
host path, so a slow launch path is not timed as kernel time. The GPU half is in tests/test_gpu.py
(`test_a_host_path_longer_than_the_default_hold_is_not_timed`)."""

import time
from types import SimpleNamespace

import torch

from kgym.verify import timing
from kgym.verify.candidate import launches


def test_the_hold_grows_to_cover_the_longest_host_path_and_never_shrinks():
    hold = timing.Hold()
    assert hold.cycles == timing.HOLD_CYCLES
    timing.cover(hold, 100_000)  # 0.1 ms: the default already covers it
    assert hold.cycles == timing.HOLD_CYCLES
    timing.cover(hold, 2_000_000)  # 2 ms -> 3 ms of spin
    assert hold.cycles == int(2.0 * timing.HOLD_MARGIN * timing.HOLD_CYCLES_PER_MS)
    grown = hold.cycles
    timing.cover(hold, 1_000)
    assert hold.cycles == grown


def test_the_hold_is_capped_and_a_fixed_hold_stays_fixed():
    hold = timing.Hold()
    timing.cover(hold, 10**9)  # a one-second host path is the call's own: timed, not hidden
    assert hold.cycles == int(timing.HOLD_MAX_MS * timing.HOLD_CYCLES_PER_MS)
    fixed = timing.Hold(0, adaptive=False)
    timing.cover(fixed, 2_000_000)
    assert fixed.cycles == 0


def test_run_timed_grows_the_hold_it_is_given_from_warm_up_calls():
    hold = timing.Hold()

    def slow() -> None:
        t = time.perf_counter()
        while time.perf_counter() - t < 0.002:
            pass

    timing.run_timed(slow, device=torch.device("cpu"), runs=2, warmup=2, hold=hold)
    assert hold.cycles >= int(2.0 * timing.HOLD_MARGIN * timing.HOLD_CYCLES_PER_MS)


def test_on_the_cpu_the_span_is_the_run_and_hidden_work_is_wall_minus_span():
    times, walls, spans, clock = timing.run_timed(lambda: time.sleep(0.001), device=torch.device("cpu"),
                                                  runs=5, warmup=1)
    assert clock == "host" and spans == times and len(walls) == 5
    m = timing.Measurement([1.0, 1.0, 1.0], [5.0, 5.0, 5.0], "cuda_events", [4.5, 4.6, 4.4])
    assert abs(m.hidden_ms - 0.5) < 1e-9  # the span, not the events, is what the wall clock is held to
    assert timing.Measurement([1.0], [5.0], "cuda_events").hidden_ms == 4.0  # no span kept: the events


def test_each_timed_run_hands_its_figures_on_before_the_next_call():
    """The child sends these with each run's `ran`: what the lists hold later (a forward that reached
    them rewrote earlier runs' times) no longer decides anything the parent was already told."""
    seen, calls = [], []

    def fn() -> None:
        calls.append(len(seen))  # how many runs had been handed on when this call started
        time.sleep(0.001)

    times, walls, spans, _ = timing.run_timed(fn, device=torch.device("cpu"), runs=4, warmup=2,
                                              after_each=lambda *fig: seen.append(fig))
    assert [i for i, *_ in seen] == [0, 1, 2, 3]
    assert [tuple(f) for _, *f in seen] == list(zip(times, walls, spans))
    assert calls == [0, 0, 0, 1, 2, 3]  # two warm-up calls hand nothing on; every timed run, before the next


def _device(name, stream):
    return SimpleNamespace(name=name, device_type="DeviceType.CUDA", device_resource_id=stream)


def test_device_streams_groups_device_work_by_stream_and_ignores_host_ops():
    events = [
        SimpleNamespace(name="aten::empty_like", device_type="DeviceType.CPU", device_resource_id=1234),
        _device("void at::native::vectorized_elementwise_kernel<fill>", 7),
        _device("relu_kernel", 7),
        _device("relu_kernel", 7),
    ]
    assert launches.device_streams(events) == {
        "7": ["void at::native::vectorized_elementwise_kernel<fill>", "relu_kernel"]}
    events.append(_device("relu_kernel", 13))  # the same kernel on a side stream
    assert list(launches.device_streams(events)) == ["7", "13"]


def test_memsets_may_run_on_any_stream_kernels_and_copies_may_not():
    # cuDNN zeroes its workspace on a stream of its own (a conv hybrid on an H200)
    events = [_device("Memset (Device)", 13), _device("sm80_xmma_fprop_implicit_gemm", 7),
              _device("add_relu_kernel", 7)]
    assert list(launches.working_streams(events)) == ["7"]
    assert list(launches.working_streams(events + [_device("Memcpy DtoD (Device -> Device)", 13)])) == ["13", "7"]
    assert list(launches.working_streams(events + [_device("relu_kernel", 21)])) == ["7", "21"]


def test_the_same_stream_id_on_two_devices_is_two_streams():
    # CUPTI numbers streams per device: the default stream of every visible GPU has the same id, so a
    # candidate's kernel on a second GPU read as the timed stream (tests/exploits/test_second_gpu.py).
    def on(name, stream, device):
        return SimpleNamespace(name=name, device_type="DeviceType.CUDA", device_resource_id=stream,
                               device_index=device)

    timed = [on("void at::native::vectorized_elementwise_kernel<fill>", 7, 0), on("relu_kernel", 7, 0)]
    assert list(launches.working_streams(timed)) == ["7@cuda:0"]
    assert list(launches.working_streams(timed + [on("relu_kernel", 7, 1)])) == ["7@cuda:0", "7@cuda:1"]
    # an event that names no device joins its stream's one device
    assert list(launches.working_streams(timed + [_device("relu_kernel", 7)])) == ["7@cuda:0"]
    # a memset on another device's stream reads and computes nothing, as on another stream of the same one
    assert list(launches.working_streams(timed + [on("Memset (Device)", 7, 1)])) == ["7@cuda:0"]


def test_cuda_timed_runs_shrink_only_for_inputs_larger_than_any_registered_task():
    assert timing.cuda_timed_runs(0) == timing.CUDA_TIMED_RUNS
    assert timing.cuda_timed_runs(128 * 2**20) == 100  # the largest full-size task input
    assert timing.cuda_timed_runs(1 * 2**30) == 64
    assert timing.cuda_timed_runs(4096 * 393216 * 4) == timing.MIN_TIMED_RUNS  # KernelBench L1 ReLU, 6.4 GB
