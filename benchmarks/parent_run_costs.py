"""What the parent does around each timed run, op by op, with the allocator's counters: the draws
(one per hidden-case kind, mixed-sign variants included), the copy into the lent buffer, the check
buffer's poisoning, the input check, the reference forward and the output's fast comparison.

Why: on one H100 (2026-12-07, verifier 19) the warm KernelBench L1 ReLU verdict spent 4.9 of its
9.4 s in the parent between runs (30 timed + 5 warm-up runs: 51 ms of draws, 14 ms of input checks
and 75 ms of output checks a run), where moving the bytes takes ~12, ~4 and ~8 ms at the H100's
3.35 TB/s, and the parent's allocator made 68 cudaMalloc calls a verdict. This prints, for each op,
the median milliseconds a run (synchronised around it) and the cudaMalloc / cudaFree calls it made,
so the next change is chosen from figures. `--hold-gib` keeps that much device memory allocated
beside (what the candidate's process and the lent buffers hold in a real verdict), to see the
allocator under the same pressure.

    python benchmarks/parent_run_costs.py --device cuda [--rows 4096 --cols 393216] [--runs 35] [--hold-gib 26]
    python benchmarks/parent_run_costs.py --device cpu --rows 64 --cols 1024      # the code path, small
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from kgym.verify.parent import cases  # noqa: E402
from kgym.verify.parent.verifier import _poison_buffer, _reference_forward  # noqa: E402

COUNTERS = ("num_device_alloc", "num_device_free", "num_alloc_retries")


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def counters(device: torch.device) -> dict[str, int]:
    if device.type != "cuda":
        return dict.fromkeys(COUNTERS, 0)
    stats = torch.cuda.memory_stats(device)
    return {k: int(stats.get(k, 0)) for k in COUNTERS}


class Ops:
    """Milliseconds and allocator calls per op, accumulated over runs."""

    def __init__(self, device: torch.device):
        self.device = device
        self.ms: dict[str, list[float]] = {}
        self.calls: dict[str, dict[str, int]] = {}

    def time(self, name: str, fn, *args):
        sync(self.device)
        before = counters(self.device)
        t0 = time.perf_counter()
        out = fn(*args)
        sync(self.device)
        self.ms.setdefault(name, []).append((time.perf_counter() - t0) * 1e3)
        after = counters(self.device)
        got = self.calls.setdefault(name, dict.fromkeys(COUNTERS, 0))
        for k in COUNTERS:
            got[k] += after[k] - before[k]
        return out

    def table(self, runs: int) -> list[dict[str, object]]:
        return [{"op": name, "median_ms": round(statistics.median(v), 3), "total_ms": round(sum(v), 1),
                 "count": len(v), **{k: self.calls[name][k] for k in COUNTERS}} for name, v in self.ms.items()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="parent_run_costs.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--cols", type=int, default=393216)
    p.add_argument("--runs", type=int, default=35, help="timed + warm-up runs of one batch (30 + 5 at 6.4 GB)")
    p.add_argument("--hold-gib", type=float, default=0.0, help="device memory kept allocated beside")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    device = torch.device(args.device)
    rows, cols = args.rows, args.cols
    model = torch.nn.ReLU().to(device)

    def get_inputs():
        return [torch.randn(rows, cols)]

    hold = (torch.empty(int(args.hold_gib * 2**30), dtype=torch.uint8, device=device)
            if args.hold_gib and device.type == "cuda" else None)
    # ReLU's plan: abs and shifted leave it the identity, so they are its mixed-sign variants
    plan = [(name, cases.mixed_sign(t) if name in ("abs", "shifted") else t) for name, t in cases.CASES]
    work = torch.empty(rows, cols, device=device)
    check = torch.empty(rows, cols, device=device)
    ops = Ops(device)
    t_all = time.perf_counter()
    for i in range(args.runs):
        name, transform = plan[i % len(plan)]
        draw = ops.time(f"draw {name}", cases.make_inputs, get_inputs, 1000 + i, transform, device)
        ops.time("copy into the lent buffer", work.copy_, draw[0])
        ops.time("poison the check buffer", _poison_buffer, check)
        check.copy_(torch.relu(work))  # stands for the candidate's run: its output in the check buffer
        ops.time("input check (unchanged)", cases.unchanged, work, draw[0])
        ref = ops.time("reference forward", _reference_forward, model, draw)
        if not ops.time("output fast pass (within)", cases.within, check, ref):
            ops.time("output full compare (within said no)", cases.compare, check, ref)
        draw = ref = None  # freed before the next draw, as the verifier's loop does
    wall = time.perf_counter() - t_all
    rows_out = ops.table(args.runs)
    gb = rows * cols * 4 / 1e9
    print(f"parent_run_costs: relu {rows}x{cols} fp32 ({gb:.2f} GB) on {device}, {args.runs} runs, "
          f"{args.hold_gib:g} GiB held beside; {wall:.2f} s in all, {wall / args.runs * 1e3:.1f} ms a run")
    print(f"{'op':40s} {'median ms':>10s} {'total ms':>10s} {'runs':>5s} {'cudaMalloc':>10s} {'cudaFree':>9s} "
          f"{'retries':>8s}")
    for r in rows_out:
        print(f"{r['op']:40s} {r['median_ms']:10.3f} {r['total_ms']:10.1f} {r['count']:5d} "
              f"{r['num_device_alloc']:10d} {r['num_device_free']:9d} {r['num_alloc_retries']:8d}")
    if args.json:
        args.json.write_text(json.dumps({"device": str(device), "shape": [rows, cols], "runs": args.runs,
                                         "hold_gib": args.hold_gib, "wall_s": wall, "ops": rows_out}, indent=1))
    del hold
    return 0


if __name__ == "__main__":
    sys.exit(main())
