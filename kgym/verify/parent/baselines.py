"""Gate 5's baselines: eager PyTorch and torch.compile(mode="max-autotune"), cached on disk.

Measured in the trusted parent with the same protocol as the candidate (`kgym.verify.timing`), on
the same device. The cache key is (reference hash, input shapes and dtypes, device name, torch and
triton versions, baseline kind, protocol), so a candidate never pays for a baseline after the first
one on a machine. Files are written to a temporary name and renamed.

A cached baseline is validated before it is used: an eager baseline timed while the machine was
loaded was cached as stable, and the same kernel then scored 0.78 on every later run instead of
0.50. So every verdict re-times the cached eager baseline briefly (CHECK_RUNS runs) right after the
candidate was timed and its process killed and reaped (nothing is timed for a baseline while a
candidate's process can run), on the same device in the same quiet window; when the re-measure's
median is faster by more than AGREE_FACTOR (`stale`: spreads excuse nothing in that direction), the
entry is re-measured in full and replaced (the torch.compile entry too, since it was measured under
the same conditions). An entry is only ever replaced by a faster figure: load makes timings slower;
a cache that only gets faster cannot be poisoned by it (a first measurement slowed that way is
corrected by the next candidate's check). Only stable figures are cached or read back (`usable`): an
entry with a spread over the variation gate agrees with every re-measure within its spread and would
never be replaced.

Off the candidate's path (docs/farm.md, "Baselines off the candidate's path"): `measure_baseline` is
the one function that times a baseline in full, whether a candidate's verification needs it now, a
worker prefetches it for a task about to be handed out, or a deferred torch.compile figure is
measured after the verdict (`Verifier.prefetch`). Each full measurement is described by a
`Measured` value, which the farm stores in the run's baselines table. Does not decide when a
baseline is measured (the verifier and the worker do) or validate one (the verifier does, beside
the candidate, whatever measured it).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import torch

from kgym.contract import Timing
from kgym.contract.verdict import usable_baseline
from kgym.verify import timing

KINDS = ("eager", "compile")
AGREE_FACTOR = 1.5  # a cached median within [1/1.5, 1.5] x a fresh one (beyond the spreads) stands
CHECK_RUNS = 20  # at most this many runs re-time a cached baseline (and at least 3)


def agrees(cached: Timing, fresh: Timing) -> bool:
    """Does a fresh short measurement confirm a cached baseline? Ratios of medians within
    AGREE_FACTOR, after widening each side by its own spread (noise is not disagreement)."""
    lo_c, hi_c = max(1e-9, cached.median_ms - cached.spread_ms), cached.median_ms + cached.spread_ms
    lo_f, hi_f = max(1e-9, fresh.median_ms - fresh.spread_ms), fresh.median_ms + fresh.spread_ms
    return lo_c <= hi_f * AGREE_FACTOR and lo_f <= hi_c * AGREE_FACTOR


def stale(cached: Timing, fresh: Timing) -> bool:
    """Is a cached baseline too slow by a re-measure beside the candidate? Its median is more than
    AGREE_FACTOR times the re-measure's, spreads aside. Load only slows a measurement, so a re-measure
    that much faster says the cached median is wrong however wide either spread is. `agrees` widens
    both figures by their spreads: an entry whose spread nears its median (the variation gate's 30 us
    floor allows it for any baseline under 0.3 ms) reached down to ~0, "agreed" with every faster
    re-measure and was never replaced, inflating every later speedup of the task (red team,
    2026-12-07; tests/exploits/test_baseline_spread_excuse.py)."""
    return fresh.median_ms * AGREE_FACTOR < cached.median_ms


# May a baseline figure be cached and stand for later verdicts: the one rule the reward and the records use too.
usable = usable_baseline


def check_runs(runs: int) -> int:
    return max(3, min(CHECK_RUNS, runs // 5))


def default_cache_dir() -> str:
    return os.environ.get("KGYM_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "kgym")


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    import platform

    return f"cpu-{platform.machine()}-{os.cpu_count()}"


def _shapes(inputs: list[Any]) -> list[Any]:
    return [[list(x.shape), str(x.dtype)] if isinstance(x, torch.Tensor) else repr(x) for x in inputs]


class BaselineCache:
    def __init__(self, directory: str | None = None):
        self.dir = os.path.join(directory or default_cache_dir(), "baselines")

    def key(self, ref_sha: str, inputs: list[Any], device: torch.device, kind: str, protocol: dict) -> str:
        import triton

        blob = json.dumps({
            "ref": ref_sha, "inputs": _shapes(inputs), "device": device_name(device), "kind": kind,
            "torch": torch.__version__, "triton": triton.__version__, "protocol": protocol,
        }, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def get(self, key: str) -> Timing | None:
        """The cached entry, or None: none, unreadable, or not a stable figure (`usable`)."""
        try:
            with open(os.path.join(self.dir, key + ".json")) as f:
                d = json.load(f)
            t = Timing(**{**d, "cached": True})
        except (OSError, ValueError, TypeError):
            return None
        return t if usable(t) else None

    def put(self, key: str, t: Timing) -> None:
        if not usable(t):
            raise ValueError(f"an unstable baseline is never cached: {t}")
        os.makedirs(self.dir, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump({k: v for k, v in t.__dict__.items() if k != "cached"}, f)
        os.replace(tmp, os.path.join(self.dir, key + ".json"))


def measure_model(model: torch.nn.Module, bases: list[Any], device: torch.device, *, runs: int,
                  warmup: int, scale_seed: int, max_remeasure: int) -> Timing:
    """Time a trusted module under gate 5's protocol, re-measuring (bounded) while unstable."""
    inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in bases]
    scales = timing.scales(runs, scale_seed)

    def before_each(i: int) -> None:
        timing.refresh(inputs, bases, scales[i] if i >= 0 else scales[0])

    def fn() -> None:
        with torch.no_grad():
            model(*inputs)

    best = None
    for _ in range(1 + max_remeasure):
        m = timing.measure(fn, device=device, runs=runs, warmup=warmup, before_each=before_each)
        if best is None or m.spread_ms / m.median_ms < best.spread_ms / best.median_ms:
            best = m
        if m.stable:
            break
    return Timing(best.median_ms, best.spread_ms, runs, best.stable, best.clock)


class Source(StrEnum):
    """Why a baseline was measured in full: on a candidate's path (its verification found no usable
    cached entry), prefetched for a task about to be handed out, or deferred past the verdict (a
    torch.compile figure the reward does not need)."""

    CANDIDATE = "candidate"
    PREFETCH = "prefetch"
    DEFERRED = "deferred"


@dataclass(frozen=True)
class Measured:
    """One full baseline measurement: what, where (`device_name`) and how long it took."""

    kind: str  # eager | compile
    timing: Timing
    key: str  # the BaselineCache key it was stored under
    device_name: str
    seconds: float  # wall time of the measurement (compile included for torch.compile)
    measured_at: float  # POSIX seconds


def measure_baseline(kind: str, model: torch.nn.Module, nominal: list[Any], device: torch.device, *, runs: int,
                     warmup: int, max_remeasure: int) -> tuple[Timing, float]:
    """A baseline of `kind` timed in full on the nominal inputs, and the seconds it took. The
    candidate's path and the prefetcher both call this, so a prefetched figure is the one the
    candidate's own verification would have measured (same model, inputs, device and protocol)."""
    if kind not in KINDS:
        raise ValueError(f"baseline kind {kind!r}: use one of {', '.join(KINDS)}")
    t0 = time.perf_counter()
    fn = model if kind == "eager" else torch.compile(model, mode="max-autotune")
    t = measure_model(fn, nominal, device, runs=runs, warmup=max(warmup, 3 if kind == "compile" else 1),
                      scale_seed=0, max_remeasure=max_remeasure)
    return t, time.perf_counter() - t0
