"""Every registered task's reference solution through `kgym.verify`, with verify time and speedups.

On a GPU this is the proof that each family is solvable at full size (1M-32M elements): per task and
stage, whether the reference solution passes every gate, the wall time of its verification (torch.compile
baseline included the first time, then cached), the kernel's median time against eager PyTorch and
torch.compile(max-autotune), and the known-wrong answer's verdict. Figures go to stdout, a JSON
file and, with --plot, a bar chart of speedups per task.

    python benchmarks/task_solutions.py [--device cuda] [--size full] [--seed 0] [--family F ...]
                                        [--no-wrong] [--zygote on|off] [--json OUT.json] [--plot OUT.png]
    python benchmarks/task_solutions.py --from-json ROWS.json --plot OUT.png   # redraw a recorded run's figure
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

from kgym.reward import reward  # noqa: E402
from kgym.tasks import make, operations  # noqa: E402
from kgym.verify import Verifier, VerifyConfig  # noqa: E402
from kgym.verify.parent.sandbox import Sandbox  # noqa: E402


def _ms(v, key):
    t = v.timings.get(key)
    return round(t.median_ms, 4) if t else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--size", default="full")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--family", action="append", help="only these families (repeatable)")
    ap.add_argument("--task", action="append", help="only these task ids (repeatable)")
    ap.add_argument("--stages", default="all", help="'all' or a comma list (full,small,scaffold,epilogue)")
    ap.add_argument("--no-wrong", action="store_true", help="skip the known-wrong answers")
    ap.add_argument("--spares", type=int, default=2)
    ap.add_argument("--no-compile", action="store_true", help="skip the torch.compile baseline (max-autotune "
                    "of a GEMM or conv takes 50-60 s per task)")
    ap.add_argument("--zygote", choices=("on", "off"), default="on" if Sandbox.DEFAULT_ZYGOTE else "off",
                    help="spares forked from the sandbox's zygote (on, the default) or started cold (off): "
                         "for side-by-side runs")
    ap.add_argument("--json", default=None)
    ap.add_argument("--plot", default=None, help="PNG of speedup vs eager and vs torch.compile per task")
    ap.add_argument("--from-json", default=None, help="verify nothing: draw --plot from a --json file's rows")
    args = ap.parse_args()
    if args.from_json:
        recorded = json.loads(Path(args.from_json).read_text())
        passed = [r for r in recorded["rows"] if r["passed"]]
        if not args.plot or not passed:
            ap.error("--from-json needs --plot and a file with passed rows")
        _plot(passed, args.plot, recorded["device"], recorded.get("size", "full"))
        print(f"task_solutions: {len(passed)} passed rows of {args.from_json} -> {args.plot}")
        return
    cuda = args.device.startswith("cuda")
    cfg = VerifyConfig(device=args.device, measure_compile=cuda and not args.no_compile)
    rows = []
    name = torch.cuda.get_device_name() if cuda else "cpu"
    print(f"task_solutions: size {args.size}, seed {args.seed}, device {args.device} ({name})", flush=True)
    print(f"spares {args.spares}, zygote {args.zygote}", flush=True)
    with Verifier(cfg, spares=args.spares, zygote=args.zygote == "on") as verifier:
        for tid, op in operations().items():
            if args.family and op.family not in args.family:
                continue
            if args.task and tid not in args.task:
                continue
            for stage in op.stages:
                if args.stages != "all" and stage not in args.stages.split(","):
                    continue
                task = make(tid, args.seed, size=args.size, stage=stage)
                t0 = time.perf_counter()
                v = verifier.verify(task.reference, task.solution, **task.verify_options())
                wall = time.perf_counter() - t0
                row = {"task_id": tid, "family": op.family, "stage": stage, "shapes": task.spec.shapes,
                       "hybrid": task.hybrid, "passed": v.passed, "gate": v.gate, "reason": v.reason[:300],
                       "error": (v.error or "")[-300:], "verify_s": round(wall, 2),
                       "candidate_ms": _ms(v, "candidate"), "eager_ms": _ms(v, "eager"),
                       "compile_ms": _ms(v, "compile"), "speedup_eager": v.speedup_eager,
                       "speedup_compile": v.speedup_compile, "reward": round(reward(v), 4),
                       "notes": v.notes[:3]}
                if task.wrong is not None and not args.no_wrong:
                    w = verifier.verify(task.reference, task.wrong, **task.verify_options())
                    row["wrong_gate"] = w.gate
                    row["wrong_passed"] = w.passed
                rows.append(row)
                se = f"{v.speedup_eager:.2f}x" if v.speedup_eager else "-"
                sc = f"{v.speedup_compile:.2f}x" if v.speedup_compile else "-"
                print(f"  {tid:<28} {stage:<9} {'PASS' if v.passed else 'FAIL ' + str(v.gate):<16} "
                      f"verify {wall:6.2f} s  kernel {row['candidate_ms']} ms  eager {row['eager_ms']} ms  "
                      f"compile {row['compile_ms']} ms  vs eager {se}  vs compile {sc}  "
                      f"wrong->{row.get('wrong_gate')}" + (f"  [{v.reason[:120]}]" if not v.passed else ""),
                      flush=True)
    passed = [r for r in rows if r["passed"]]
    print(f"{len(passed)}/{len(rows)} reference solutions passed; "
          f"{sum(1 for r in rows if r.get('wrong_passed') is False)}/{sum(1 for r in rows if 'wrong_passed' in r)} "
          f"wrong answers failed")
    if passed:
        print(f"median verify time {statistics.median(r['verify_s'] for r in passed):.2f} s; "
              f"median speedup vs eager {statistics.median(r['speedup_eager'] or 0 for r in passed):.2f}x, "
              f"vs torch.compile {statistics.median(r['speedup_compile'] or 0 for r in passed):.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": name, "size": args.size, "seed": args.seed,
                                               "rows": rows}, indent=2))
    if args.plot and passed:
        _plot(passed, args.plot, name, args.size)


def _plot(rows, path, device, size="full") -> None:
    """One row per task id and stage (72 at full size), grouped by family in registry order (a colour
    each, `family_colors`), a bar from 1x for each measured baseline on a log axis: readable at its own
    size (the columns of the 2026-12-03 figure were 3024x600 px with 7-pt labels on their side). A
    baseline not measured (--no-compile) is said in the title, not drawn as a missing bar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    from kgym.records.plots import family_colors

    colors = family_colors(r["family"] for r in rows)
    with_compile = any(r["speedup_compile"] for r in rows)
    height = 0.8 / (2 if with_compile else 1)
    fig, ax = plt.subplots(figsize=(8.5, 1.4 + 0.2 * len(rows)))
    y = list(range(len(rows)))[::-1]  # the first task on top
    offset = height / 2 if with_compile else 0.0
    def from_one(key):  # bars start at 1x: a slower solution's bar goes left, a faster one's right
        return [(r[key] or float("nan")) - 1.0 for r in rows]

    ax.barh([v + offset for v in y], from_one("speedup_eager"), left=1.0, height=height,
            color=[colors[r["family"]] for r in rows], label="vs eager")
    if with_compile:
        ax.barh([v - offset for v in y], from_one("speedup_compile"), left=1.0, height=height,
                color=[colors[r["family"]] for r in rows], alpha=0.45, hatch="//", label="vs torch.compile")
        ax.legend(fontsize=8, loc="lower right")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.set_yticks(y, [f"{r['task_id']} / {r['stage']}" for r in rows], fontsize=7)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.grid(axis="x", alpha=0.3, which="major")
    ax.set_xlabel("speedup of the reference Triton solution (x, log; right of the line: faster)")
    ax.set_title(f"kgym task solutions at {size} size on {device}: {len(rows)} passed"
                 + ("" if with_compile else "\n(vs eager PyTorch; torch.compile not measured)"), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
