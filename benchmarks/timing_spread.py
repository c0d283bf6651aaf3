"""Run-to-run timing distribution of tasks' reference solutions and eager PyTorch, in this process.

For a task that fails gate 5's variation check with its own reference solution, this shows whether
the spread is the kernel's (bimodal kernel times) or the harness's: it times the trusted solution
with the same loop the candidate's process uses (`kgym.verify.timing.run_timed`: L2 flush, CUDA
events, input refresh with a fresh scale per run) and prints percentiles of the clock and of the
host wall time. The solutions are kgym's own, so they are imported here, outside any sandbox.

    python benchmarks/timing_spread.py softmax-v1 log_softmax-v1 [--seed 0] [--size full] [--runs 100]
                                       [--hold-cycles 0,1000000]

`--hold-cycles` times each model once per value given, side by side: the GPU spin queued after the
flush (`kgym.verify.timing.HOLD_CYCLES`), 0 for none, `adaptive` for the verifier's own (`timing.Hold`:
grown to cover the host path). A launch path slower than the flush shows up
as bimodal clock times without the hold and steady ones with it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before the solutions import triton

from kgym.tasks import make  # noqa: E402
from kgym.verify import timing  # noqa: E402
from kgym.verify.parent.reference import SOURCE_DIR, import_source, load_reference  # noqa: E402


def _pct(values: list[float]) -> str:
    q = statistics.quantiles(values, n=10, method="inclusive")
    return (f"p0 {min(values):.4f}  p10 {q[0]:.4f}  p50 {statistics.median(values):.4f}  p90 {q[-1]:.4f}  "
            f"max {max(values):.4f}  (p90-p10 {q[-1] - q[0]:.4f} ms)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("task_ids", nargs="+")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", default="full")
    ap.add_argument("--stage", default="full")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--hold-cycles", default=str(timing.HOLD_CYCLES),
                    help=f"comma list of GPU spins after the flush, each timed: cycles, or adaptive for the "
                         f"verifier's own hold (default {timing.HOLD_CYCLES})")
    ap.add_argument("--no-refresh", action="store_true", help="time without refreshing the inputs per run")
    ap.add_argument("--child-hooks", action="store_true",
                    help="then time again with the candidate process's launch counter and audit hook installed "
                         "here (irreversible: audit hooks stay for the rest of the process)")
    args = ap.parse_args()
    # With the hooks on, files may only be written where the candidate's would be: the solutions are
    # imported from import_source's folder, so that is the writable one.
    folder = Path(SOURCE_DIR)
    for hooked in ([False, True] if args.child_hooks else [False]):
        if hooked:
            _install_child_hooks(folder)
            print("-- again, with the candidate process's launch counter and audit hook installed", flush=True)
        _run(args)


def _install_child_hooks(folder: Path) -> None:
    from kgym.verify.candidate.audit import AuditTripwire
    from kgym.verify.candidate.launches import LaunchCounter

    LaunchCounter().install()
    (folder / "candidate.py").write_text("")
    AuditTripwire(str(folder / "candidate.py"), str(folder), lambda gate, reason: print("tripwire:", gate, reason)
                  ).install()


def _run(args: argparse.Namespace) -> None:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    for tid in args.task_ids:
        task = make(tid, args.seed, size=args.size, stage=args.stage)
        ref = load_reference(task.reference)
        module, _ = import_source(task.solution, "solution")
        torch.manual_seed(task.spec.seed)
        cand = module.ModelNew(*ref.get_init_inputs()).to(device)
        torch.manual_seed(task.spec.seed)
        eager = ref.Model(*ref.get_init_inputs()).to(device)
        torch.manual_seed(task.spec.seed)
        with torch.device(device):
            bases = [x.to(device) if isinstance(x, torch.Tensor) else x for x in ref.get_inputs()]
        inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in bases]
        scales = timing.scales(args.runs + 10, args.seed)
        # the loop's values bound as defaults: each task's closures keep their own tensors
        refresh = None if args.no_refresh else (
            lambda i, inputs=inputs, bases=bases, scales=scales: timing.refresh(inputs, bases, scales[i % len(scales)]))
        print(f"{tid} {task.spec.shapes} on {device}", flush=True)
        for hold in args.hold_cycles.split(","):
            for name, model in (("solution", cand), ("eager", eager)):
                with torch.no_grad():
                    times, walls, _, clock = timing.run_timed(lambda model=model, inputs=inputs: model(*inputs),
                                                              device=device, runs=args.runs,
                                                              warmup=5, before_each=refresh,
                                                              hold=timing.Hold() if hold == "adaptive" else
                                                              timing.Hold(int(hold), adaptive=False))
                label = f"{name} hold={hold}"
                print(f"  {label:<24} {clock:<11} {_pct(times)}", flush=True)
                print(f"  {label:<24} {'host wall':<11} {_pct(walls)}", flush=True)


if __name__ == "__main__":
    main()
