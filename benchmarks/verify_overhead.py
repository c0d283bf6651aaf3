"""The verifier's fixed costs per run and per verdict, each old path beside its new one, in one run.

What each row times (the old path is the code the verifier ran before 2026-12-07, kept in the
tree as the slow path or as torch's own function, so both run on the same machine and inputs):
- compare: a hidden case's comparison of a passing output, `cases._compare_chunks` (old: ~7
  synchronisations per chunk of 64M values) against `cases.compare` (its all-finite pass first);
- input check: a lent input against its pristine copy, `bitwise.same` against `cases.unchanged`
  (on a GPU a fused pass first; on the CPU the same function, so the row reads 1.0x);
- seed: one draw's seeding, `torch.manual_seed` against `cases.seed_generators`;
- profile audit: reading a profile of `--forwards` ReLU forwards for the audit, `prof.events()`
  against `profile_events.events` (the same events and tree), plus the audit itself on them;
- cache release (CUDA only): six case-like rounds (draw, transform, lent copy, reference output)
  emptying the parent's allocator cache after each (old) or not (new: enough free memory);
- kept-state walk: one walk of the ReLU candidate's globals under the child's profile hook (new only:
  the old walk is not kept; its figure is in the commit message).
Sizes are float32 element counts; on a GPU the default ends at KernelBench's 6.4 GB ReLU input.

    python benchmarks/verify_overhead.py [--device cuda|cpu] [--sizes 65535,4194304] [--repeat 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from kgym.verify.bitwise import same  # noqa: E402
from kgym.verify.candidate import kept_state, profile_events  # noqa: E402
from kgym.verify.candidate.guard import forbidden_profiled_ops  # noqa: E402
from kgym.verify.candidate.outside import CallWindow  # noqa: E402
from kgym.verify.parent import cases  # noqa: E402

GPU_SIZES = (1 << 20, 1 << 24, 1 << 28, 4096 * 393216)  # 4 MB, 67 MB, 1.07 GB, 6.44 GB of fp32
CPU_SIZES = (65535, 1 << 22)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _ms(fn, device: torch.device, repeat: int) -> float:
    fn()  # warm (Triton compiles, the allocator caches)
    times = []
    for _ in range(repeat):
        _sync(device)
        t0 = time.perf_counter()
        fn()
        _sync(device)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def _row(rows: list[dict], what: str, size: str, old: float | None, new: float) -> None:
    rows.append({"what": what, "size": size, "old_ms": old, "new_ms": new,
                 "ratio": None if old is None else old / new})
    ratio = "" if old is None else f"{old / new:8.2f}x"
    print(f"{what:16s} {size:>14s} {'' if old is None else f'{old:10.3f}':>10s} {new:10.3f} {ratio}", flush=True)


def _profile(device: torch.device, forwards: int):
    from torch._C._profiler import _ExperimentalConfig
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    x = torch.randn(1 << 16, device=device)
    prof = profile(activities=acts, experimental_config=_ExperimentalConfig(profile_all_threads=True))
    with prof:
        for _ in range(forwards):
            out = torch.empty_like(x)
            torch.clamp(x, min=0.0, out=out)
            out.clone().zero_()
        _sync(device)
    return prof


def _checks(rows: list[dict], n: int, device: torch.device, repeat: int) -> None:
    """A passing hidden case's comparison and an unchanged input's check, on `n` float32 values."""
    label = f"{n * 4 / 1e3:.0f} KB" if n * 4 < 1e6 else f"{n * 4 / 1e6:.0f} MB"
    ref = torch.rand(n, device=device)
    out = ref * (1 + 1e-5)
    _row(rows, "compare", label, _ms(lambda: cases._compare_chunks(out, ref, None), device, repeat),
         _ms(lambda: cases.compare(out, ref), device, repeat))
    copy = ref.clone()
    _row(rows, "input check", label, _ms(lambda: same(copy, ref), device, repeat),
         _ms(lambda: cases.unchanged(copy, ref), device, repeat))


def _walk_ms(device: torch.device, repeat: int) -> float:
    """One kept-state walk of verify_latency.py's ReLU candidate (its model and module globals) under
    the child's profile hook, after one launch on a GPU (Triton's compile caches hang off the kernel)."""
    from verify_latency import CANDIDATE  # beside this file

    path = Path(tempfile.mkdtemp(prefix="kgym-walk-")) / "candidate.py"
    path.write_text(CANDIDATE.format(block=4096))
    spec = importlib.util.spec_from_file_location("candidate", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["candidate"] = module
    spec.loader.exec_module(module)
    model = module.ModelNew()
    if device.type == "cuda":
        model(torch.rand(4096, device=device))
        torch.cuda.synchronize(device)
    window = CallWindow(lambda gate, reason: None)
    window.candidate_globals = module.__dict__
    found, problem = kept_state.reachable(model, module.__dict__)
    assert problem is None, problem
    sys.setprofile(window.watch)
    try:
        return _ms(lambda: kept_state.reachable(model, module.__dict__), torch.device("cpu"), repeat * 20)
    finally:
        sys.setprofile(None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--sizes", default=None, help="comma list of float32 element counts")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--forwards", type=int, default=105, help="forwards in the profile (a GPU batch: 35-105)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    device = torch.device(args.device)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else (
        GPU_SIZES if device.type == "cuda" else CPU_SIZES)
    rows: list[dict] = []
    print(f"verify_overhead on {torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'} "
          f"(torch {torch.__version__}); median of {args.repeat}, ms")
    print(f"{'what':16s} {'size':>14s} {'old':>10s} {'new':>10s}    ratio")
    for n in sizes:
        _checks(rows, n, device, args.repeat)
        if device.type == "cuda":
            torch.cuda.empty_cache()

    def seeds(f):
        return lambda: [f(s) for s in range(100)]

    _row(rows, "seed x100", "-", _ms(seeds(torch.manual_seed), device, args.repeat),
         _ms(seeds(cases.seed_generators), device, args.repeat))

    prof = _profile(device, args.forwards)
    list(prof.events())  # torch caches its FunctionEvents: time a fresh profile each repeat instead
    olds, news = [], []
    for _ in range(args.repeat):
        p = _profile(device, args.forwards)
        t0 = time.perf_counter()
        forbidden_profiled_ops(list(p.events()), False)
        olds.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        forbidden_profiled_ops(profile_events.events(p), False)
        news.append((time.perf_counter() - t0) * 1e3)
    _row(rows, "profile audit", f"{args.forwards} fwd", statistics.median(olds), statistics.median(news))

    if device.type == "cuda":
        n = sizes[-1]

        def rounds(release: bool):
            def run():
                for _ in range(6):
                    x = torch.rand(n, device=device)
                    y = (x * 3.0).contiguous()
                    lent = y.clone()
                    ref_out = torch.relu(y)
                    del x, y, lent, ref_out
                    if release:
                        torch.cuda.empty_cache()
            return run

        _row(rows, "cache release", f"{n * 4 / 1e6:.0f} MB x6", _ms(rounds(True), device, args.repeat),
             _ms(rounds(False), device, args.repeat))

    _row(rows, "kept-state walk", "relu globals", None, _walk_ms(device, args.repeat))
    if args.json:
        Path(args.json).write_text(json.dumps({"device": str(device), "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
