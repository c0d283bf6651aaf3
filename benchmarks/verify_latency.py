"""Wall time per candidate through `kgym.verify`, with a breakdown by stage.

On a GPU: KernelBench level-1 ReLU at its own size (one 4096 x 393216 fp32 input, 6.4 GB), its
protocol (5 correctness inputs, 100 timed runs), cached baselines and a warm spare. Target: median
<= 4 s per candidate; KernelBench's own harness took 69-98 s per candidate on the same problem on an
H200 (figure from ../shared/DESIGN.md, not re-measured here).
On CPU: a 64K-element ReLU through the Triton interpreter. Target: <= 5 s.
Each candidate prints its stages (`Verdict.stages_s`: correctness and timing split into the parent's
draws, lending, reference and checks, the child's turns and the child's own split of its share; see
docs/verify.md) and, on CUDA, the parent's allocator counters over the verdict (cudaMalloc and
cudaFree calls, retries): churn there is time in the draws and lending stages.

    python benchmarks/verify_latency.py [--device cuda|cpu] [--candidates 5] [--json OUT.json]
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

from kgym.verify import Verifier, VerifyConfig  # noqa: E402
from kgym.verify.parent.sandbox import Sandbox  # noqa: E402

KERNELBENCH_SECONDS = (69.0, 98.0)

REFERENCE = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.rand({rows}, {cols})]

def get_init_inputs():
    return []
'''

CANDIDATE = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # bytes moved: 8 per element (one fp32 read, one write); no FLOPs worth counting
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=m), 0.0), mask=m)

class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, {block}),)](x, out, n, BLOCK={block})
        return out
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--candidates", type=int, default=5, help="warm candidates timed after the first")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--cols", type=int, default=None)
    ap.add_argument("--spares", type=int, default=3, help="warm candidate processes kept ahead")
    ap.add_argument("--quiet-mode", default=Sandbox.DEFAULT_QUIET_MODE, choices=Sandbox.QUIET_MODES,
                    help="spares still warming when a short kernel is timed: pause them (default) or wait for them")
    ap.add_argument("--gap", type=float, default=0.0, help="seconds between candidates (0: back to back)")
    ap.add_argument("--json", default=None, help="write the figures here")
    ap.add_argument("--profile-parent", default=None, metavar="TXT",
                    help="also verify one more warm candidate under torch.profiler (the parent's process: its "
                         "kernels and CUDA runtime calls such as cudaMalloc, cudaFree and synchronizations) and "
                         "write its top ops by host and by device time here")
    args = ap.parse_args()
    cuda = args.device.startswith("cuda")
    rows = args.rows or (4096 if cuda else 257)
    cols = args.cols or (393216 if cuda else 255)
    ref = REFERENCE.format(rows=rows, cols=cols)
    block = 4096
    cfg = VerifyConfig(device=args.device, timed_runs=100 if cuda else 10, measure_compile=cuda)
    print(f"verify_latency: relu {rows}x{cols} fp32 ({rows * cols * 4 / 1e9:.2f} GB) on {args.device}", flush=True)
    results = []
    with Verifier(cfg, spares=args.spares, quiet_mode=args.quiet_mode) as verifier:
        t0 = time.perf_counter()
        first = verifier.verify(ref, CANDIDATE.format(block=block))
        first_s = time.perf_counter() - t0
        assert first.passed, (first.gate, first.reason, first.error)
        print(f"  first candidate (cold spare wait, baselines measured): {first_s:.2f} s  "
              f"stages {_fmt(first.stages_s)}", flush=True)
        for i in range(args.candidates):
            # a different source each time: nothing is cached for the candidate itself
            src = CANDIDATE.format(block=block) + f"\n# candidate {i}\n"
            time.sleep(args.gap)
            before = _allocator(args.device)
            t0 = time.perf_counter()
            v = verifier.verify(ref, src)
            wall = time.perf_counter() - t0
            assert v.passed, (v.gate, v.reason, v.error)
            allocs = {k: n - before[k] for k, n in _allocator(args.device).items()}
            results.append({"wall_s": wall, **{k: round(x, 4) for k, x in v.stages_s.items()}, **allocs})
            print(f"  candidate {i}: {wall:.2f} s  stages {_fmt(v.stages_s)}", flush=True)
            if allocs:  # the parent's allocator: device mallocs and frees (cache churn) in this verdict
                print(f"    parent allocator: {', '.join(f'{k} {n}' for k, n in allocs.items())}", flush=True)
        if args.profile_parent:
            _profile_parent(verifier, ref, CANDIDATE.format(block=block) + "\n# profiled\n", args.profile_parent)
    walls = [r["wall_s"] for r in results]
    med = statistics.median(walls)
    summary = {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "shape": [rows, cols], "gigabytes": rows * cols * 4 / 1e9,
        "first_candidate_s": first_s, "median_wall_s": med, "min_wall_s": min(walls), "max_wall_s": max(walls),
        "stage_medians_s": {k: statistics.median(r[k] for r in results if k in r)
                            for k in results[0] if k != "wall_s" and k not in ALLOCATOR_STATS},
        "parent_allocator_medians": {k: statistics.median(r[k] for r in results if k in r)
                                     for k in ALLOCATOR_STATS if k in results[0]},
        "candidate_ms": first.timings["candidate"].median_ms, "eager_ms": first.timings["eager"].median_ms,
        "compile_ms": first.timings["compile"].median_ms if first.timings.get("compile") else None,
        "speedup_eager": first.speedup_eager, "speedup_compile": first.speedup_compile,
        "target_s": 4.0 if cuda else 5.0, "spares": args.spares, "gap_s": args.gap,
    }
    print(f"median wall per candidate: {med:.2f} s (target <= {summary['target_s']:.0f} s): "
          f"{'MET' if med <= summary['target_s'] else 'MISSED'}")
    print(f"stage medians: {_fmt(summary['stage_medians_s'])}")
    if cuda:
        lo, hi = KERNELBENCH_SECONDS
        print(f"KernelBench's harness on this problem: {lo:.0f}-{hi:.0f} s per candidate "
              f"(DESIGN.md) -> {lo / med:.0f}x-{hi / med:.0f}x faster")
        print(f"kernel: candidate {summary['candidate_ms']:.3f} ms, eager {summary['eager_ms']:.3f} ms, "
              f"torch.compile {summary['compile_ms']:.3f} ms; speedup vs eager {first.speedup_eager:.3f}x, "
              f"vs compile {first.speedup_compile:.3f}x; "
              f"effective bandwidth {rows * cols * 8 / (summary['candidate_ms'] / 1e3) / 1e9:.0f} GB/s")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2))


def _profile_parent(verifier: Verifier, ref: str, src: str, path: str) -> None:
    """One more warm verdict with the parent under torch.profiler: where its seconds go, op by op (the
    profiler's own overhead is in these figures; the stage split above is the unprofiled one)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    t0 = time.perf_counter()
    with profile(activities=activities) as prof:
        v = verifier.verify(ref, src)
    wall = time.perf_counter() - t0
    table = prof.key_averages()
    parts = [f"profiled verdict: {wall:.2f} s, passed {v.passed}; stages {_fmt(v.stages_s)}",
             "by host time:", table.table(sort_by="self_cpu_time_total", row_limit=40, max_name_column_width=60)]
    if torch.cuda.is_available():
        parts += ["by device time:", table.table(sort_by="self_device_time_total", row_limit=25,
                                                  max_name_column_width=60)]
    Path(path).write_text("\n".join(parts))
    print(f"  profiled candidate: {wall:.2f} s (parent's op table in {path})", flush=True)


ALLOCATOR_STATS = ("num_device_alloc", "num_device_free", "num_alloc_retries")


def _allocator(device: str) -> dict[str, int]:
    """The parent's CUDA allocator counters (cudaMalloc and cudaFree calls, retries after an OOM)."""
    if not device.startswith("cuda"):
        return {}
    stats = torch.cuda.memory_stats(device)
    return {k: int(stats.get(k, 0)) for k in ALLOCATOR_STATS}


def _fmt(stages: dict) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in stages.items())


if __name__ == "__main__":
    main()
