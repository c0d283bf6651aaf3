"""Gate 5's measurement: one protocol for the candidate (in the child) and the baselines (in the parent).

Per timed run: refresh the inputs in place with a fresh scale (so a cache keyed on pointers or on
content returns stale results, which the parent then catches on the last run's output), queue an L2
flush, then time the call. On CUDA the clock is a pair of CUDA events, and the host wall time of the
same run (ended by a device-wide synchronize, which also waits for side streams) is kept beside it:
work hidden on a side stream or in a thread shows up as wall time the events did not see. On CPU the
clock is the host's, and CPU speed says nothing about GPU speed.

The clocks and synchronisation functions are bound when this module is imported, before any
candidate code exists in the process, so monkeypatching `torch.cuda.Event` or `time.perf_counter`
later changes nothing here.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

_perf_counter_ns = time.perf_counter_ns
_Event = torch.cuda.Event
_record = torch.cuda.Event.record
_elapsed_time = torch.cuda.Event.elapsed_time
_synchronize = torch.cuda.synchronize
_sleep = torch.cuda._sleep

STABLE_RELATIVE = 0.10  # accepted run-to-run variation, relative to the median
STABLE_FLOOR_MS = 0.030  # ... or absolute, for micro-kernels
# Many times the L2 of an H100 (50 MB) or H200 (60 MB); clearing it takes ~0.3 ms of GPU time, which
# also covers the host's launch path of the timed call (Triton's is slower than eager PyTorch's).
L2_FLUSH_BYTES = 1024 * 1024 * 1024
# After the flush the GPU also spins this many clock cycles (~0.5 ms at H100/H200 clocks) before the
# start event: a launch path slower than the flush (many kernel arguments, host-side checks) would
# otherwise land between the events and be timed as kernel time, run by run (bimodal micro-kernels).
HOLD_CYCLES = 1_000_000


@dataclass
class Measurement:
    times_ms: list[float]  # the clock's time per run (events on CUDA)
    wall_ms: list[float]  # host wall time per run, synchronize included
    clock: str

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def spread_ms(self) -> float:
        q = statistics.quantiles(self.times_ms, n=10, method="inclusive")
        return q[-1] - q[0]

    @property
    def stable(self) -> bool:
        return self.spread_ms <= max(STABLE_RELATIVE * self.median_ms, STABLE_FLOOR_MS)

    @property
    def hidden_ms(self) -> float:
        """Median of wall minus clock per run: time the clock did not see (host overhead included)."""
        return statistics.median(w - t for w, t in zip(self.wall_ms, self.times_ms))


def scales(n: int, seed: int) -> list[float]:
    """Per-run input scales in [0.5, 2): distinct values, drawn from a seed the caller keeps."""
    g = torch.Generator().manual_seed(seed)
    return (0.5 + 1.5 * torch.rand(n, generator=g, dtype=torch.float64)).tolist()


def refresh(targets: Sequence[Any], bases: Sequence[Any], scale: float) -> None:
    """targets[i] <- bases[i] * scale for floating tensors (others are left as they are)."""
    for t, b in zip(targets, bases):
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            torch.mul(b, scale, out=t)


def measure(fn: Callable[[], Any], *, device: torch.device, runs: int, warmup: int,
            before_each: Callable[[int], None] | None = None) -> Measurement:
    """Time `fn` `runs` times after `warmup` calls; `before_each(i)` runs untimed before run i."""
    return Measurement(*run_timed(fn, device=device, runs=runs, warmup=warmup, before_each=before_each))


def run_timed(fn: Callable[[], Any], *, device: torch.device, runs: int, warmup: int,
              before_each: Callable[[int], None] | None = None,
              hold_cycles: int = HOLD_CYCLES) -> tuple[list[float], list[float], str]:
    """The raw per-run (clock ms, wall ms, clock name): what the candidate's process reports, with no
    class of this module in between for a candidate to patch. `hold_cycles` (bound when this module
    is imported) is the GPU spin queued after the flush; 0 turns it off."""
    cuda = device.type == "cuda"
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.float32, device=device) if cuda else None
    for i in range(warmup):
        if before_each is not None:
            before_each(-1 - i)
        fn()
    if cuda:
        _synchronize(device)
    times, walls = [], []
    for i in range(runs):
        if before_each is not None:
            before_each(i)
        if cuda:
            start, end = _Event(enable_timing=True), _Event(enable_timing=True)
            _synchronize(device)
            t0 = _perf_counter_ns()
            # The flush and the hold are queued, not waited for: while the GPU clears L2 and spins,
            # the host launches the call, so the events see the kernels' time and not the launch
            # path's. The wall clock includes both; the calibration run cancels them out.
            flush.zero_()
            if hold_cycles:
                _sleep(hold_cycles)
            _record(start)
            fn()
            _record(end)
            _synchronize(device)
            t1 = _perf_counter_ns()
            times.append(_elapsed_time(start, end))
        else:
            t0 = _perf_counter_ns()
            fn()
            t1 = _perf_counter_ns()
            times.append((t1 - t0) / 1e6)
        walls.append((t1 - t0) / 1e6)
    return times, walls, "cuda_events" if cuda else "host"
