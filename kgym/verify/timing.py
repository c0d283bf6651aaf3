"""Gate 5's measurement: one protocol for the candidate (in the child) and the baselines (in the parent).

Per timed run: new inputs (the candidate's: a fresh draw of a hidden-case kind, written by the parent,
verifier.py; the baselines': the nominal inputs rescaled in place, `refresh`, as eager torch caches
nothing), queue an L2 flush and a GPU spin that outlasts the call's host path (`Hold`), then time the
call. On CUDA the
clock is a pair of CUDA events, and the host wall time of the same run (ended by a device-wide
synchronize, which also waits for side streams) is kept beside the timed stream's whole span: work
hidden in a thread, or a side stream's tail, shows up as wall time the stream did not see. Side
streams themselves are refused from the device trace (the child's rule). On CPU the clock is the
host's, and CPU speed says nothing about GPU speed.

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
# After the flush the GPU also spins at least this many clock cycles (~0.5 ms at H100/H200 clocks)
# before the start event: a launch path slower than the flush (many kernel arguments, host-side checks)
# would otherwise land between the events and be timed as kernel time, run by run (bimodal micro-kernels).
HOLD_CYCLES = 1_000_000
# The hold grows to cover the call's whole host path (see `Hold`). Cycles per ms at the highest SM
# clock of the GPUs kgym targets (H100/H200 boost at 1.98 GHz): at any lower clock a hold lasts longer,
# never shorter, than planned.
HOLD_CYCLES_PER_MS = 2_000_000
HOLD_MARGIN = 1.5  # the hold covers this many times the longest host path seen so far
HOLD_MAX_MS = 10.0  # ... up to this: a longer host path is the call's own and is timed


# Timed runs on CUDA: 100, fewer for inputs so large that each run's fresh draw, copy and lockstep
# cost more than the kernel (KernelBench level 1's 6.4 GB ReLU: ~25 ms a run, 2.5-3 s of a 4.5 s
# verification on an H200, 2026-12-03): about TIMED_BYTES_BUDGET of inputs and outputs moved per
# timed batch, never fewer than MIN_TIMED_RUNS (enough for the p10-p90 spread the variation gate
# reads). Every task of kgym's registry at full size (at most 128 MB of inputs) keeps 100.
CUDA_TIMED_RUNS = 100
MIN_TIMED_RUNS = 30
TIMED_BYTES_BUDGET = 128 * 2**30


def cuda_timed_runs(input_bytes: int) -> int:
    """Timed runs for inputs of `input_bytes` on CUDA (outputs counted as the inputs' size)."""
    if input_bytes <= 0:
        return CUDA_TIMED_RUNS
    return max(MIN_TIMED_RUNS, min(CUDA_TIMED_RUNS, TIMED_BYTES_BUDGET // (2 * input_bytes)))


@dataclass
class Measurement:
    times_ms: list[float]  # the clock's time per run (events on CUDA)
    wall_ms: list[float]  # host wall time per run, synchronize included
    clock: str
    # The timed stream's span per run, flush and hold included (CUDA: an event before the flush to
    # the end event; host clock: the run itself). None where a caller did not keep it.
    span_ms: list[float] | None = None

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
        """Median of wall minus the timed stream's span per run: time the stream did not see (the
        launch of the first op and the synchronize's return included, which a calibration cancels)."""
        spans = self.times_ms if self.span_ms is None else self.span_ms
        return statistics.median(w - t for w, t in zip(self.wall_ms, spans))


@dataclass
class Hold:
    """The GPU spin queued before each run's start event, shared by the runs of one call and its
    calibration.

    Every run of the call under the child's guard and profiler is a host path of 0.1-1 ms per launch
    and op (2026-12-03, H200: multi-op forwards such as a conv module's reached 0.3 ms of launch gap
    inside the events in most runs, and 25 of 72 reference solutions failed the variation gate with
    the fixed 0.5 ms hold). The hold grows (never shrinks) to HOLD_MARGIN times the longest host path of
    the call seen so far, warm-up runs included, capped at HOLD_MAX_MS, so the GPU reaches the start
    event only after the host has queued the whole call.

    What the hold hides from the start-end events: host work of the call (it cannot read the run's
    inputs without a synchronize, which waits for the hold and is then timed), and device work on
    another stream, which runs beside the hold. The latter is why the child requires every device
    activity it traces to run on the timed stream (`kgym.verify.candidate.launches.working_streams`), and why
    hidden work is judged on the span from before the flush (`Measurement.hidden_ms`), not on the
    start-end events: a long hold is a long spin, and its length moves with the GPU's clock."""

    cycles: int = HOLD_CYCLES
    adaptive: bool = True


def cover(hold: Hold, host_ns: int) -> None:
    """Grow `hold` so that it covers a host path of `host_ns` (see `Hold`)."""
    if hold.adaptive:
        need = int(min(HOLD_MAX_MS, HOLD_MARGIN * host_ns / 1e6) * HOLD_CYCLES_PER_MS)
        if need > hold.cycles:
            hold.cycles = need


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
    times, walls, spans, clock = run_timed(fn, device=device, runs=runs, warmup=warmup, before_each=before_each)
    return Measurement(times, walls, clock, spans)


def run_timed(fn: Callable[[], Any], *, device: torch.device, runs: int, warmup: int,
              before_each: Callable[[int], None] | None = None,
              hold: Hold | None = None,
              after_each: Callable[[int, float, float, float], None] | None = None
              ) -> tuple[list[float], list[float], list[float], str]:
    """The raw per-run (clock ms, wall ms, span ms, clock name): what the candidate's process reports,
    with no class of this module in between for a candidate to patch. The span is the timed stream's
    time from before the flush to the end event (the host clock's time on CPU). `hold` is the GPU
    spin queued after the flush (a fresh adaptive one by default; `Hold(0, adaptive=False)` turns it
    off), grown to cover the host path of every call, warm-up calls included. `after_each(i, clock
    ms, wall ms, span ms)` is handed each timed run's figures as soon as they are read (the child
    sends them to the parent with the run's `ran`, so a later rewrite of these lists changes nothing
    already sent)."""
    cuda = device.type == "cuda"
    hold = _Hold() if hold is None else hold
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.float32, device=device) if cuda else None
    for i in range(warmup):
        if before_each is not None:
            before_each(-1 - i)
        t0 = _perf_counter_ns()
        fn()
        _cover(hold, _perf_counter_ns() - t0)
    if cuda:
        _synchronize(device)
    times, walls, spans = [], [], []
    for i in range(runs):
        if before_each is not None:
            before_each(i)
        if cuda:
            first, start, end = (_Event(enable_timing=True), _Event(enable_timing=True),
                                 _Event(enable_timing=True))
            _synchronize(device)
            t0 = _perf_counter_ns()
            _record(first)
            # The flush and the hold are queued, not waited for: while the GPU clears L2 and spins,
            # the host launches the call, so the events see the kernels' time and not the launch
            # path's. The wall clock includes both; the calibration run cancels them out.
            flush.zero_()
            if hold.cycles:
                _sleep(hold.cycles)
            _record(start)
            fn()
            _record(end)
            _cover(hold, _perf_counter_ns() - t0)
            _synchronize(device)
            t1 = _perf_counter_ns()
            times.append(_elapsed_time(start, end))
            spans.append(_elapsed_time(first, end))
        else:
            t0 = _perf_counter_ns()
            fn()
            t1 = _perf_counter_ns()
            times.append((t1 - t0) / 1e6)
            spans.append(times[-1])
        walls.append((t1 - t0) / 1e6)
        if after_each is not None:
            after_each(i, times[-1], walls[-1], spans[-1])
    return times, walls, spans, "cuda_events" if cuda else "host"


_Hold, _cover = Hold, cover
