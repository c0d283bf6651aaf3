"""`kgym tasks ...`: listing, showing, exporting and decontaminating (against KernelBench) the registered tasks.

    kgym tasks list [--family F]
    kgym tasks show ID --seed N [--stage S] [--size S] [--what reference|prompt|repair|solution|scaffold|wrong|spec]
    kgym tasks export --n N [--seed S] [--size S] --out FILE.parquet
    kgym tasks decontaminate --kernelbench DIR [--seeds K] [--threshold T]

Argument parsing and printing only; the work is in `kgym.tasks`.
"""

from __future__ import annotations

import argparse
import json

from kgym.cli_common import UsageError

WHAT = ("reference", "prompt", "repair", "solution", "scaffold", "wrong", "spec")


def _usage(message: str) -> UsageError:
    return UsageError(message)


def cmd_list(args: argparse.Namespace) -> int:
    from kgym.tasks import TaskError, operations, task_ids

    try:
        ids = task_ids(args.family)
    except TaskError as e:
        raise _usage(str(e)) from None
    ops = operations()
    print(f"{'task id':<28} {'family':<14} {'mode':<7} stages")
    for tid in ids:
        op = ops[tid]
        print(f"{tid:<28} {op.family:<14} {'hybrid' if op.hybrid else 'triton':<7} {', '.join(op.stages)}")
    print(f"{len(ids)} tasks")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from kgym.tasks import TaskError, make

    try:
        task = make(args.task_id, args.seed, size=args.size, stage=args.stage, source=args.source)
    except TaskError as e:
        raise _usage(str(e)) from None
    what = args.what or ["spec", "reference", "prompt"]
    for w in what:
        if w == "spec":
            print(json.dumps(task.spec.to_dict(), indent=2))
        elif w == "prompt":
            print(task.prompt())
        elif w == "repair":
            print(json.dumps(task.repair_messages(), indent=2))
        else:
            text = getattr(task, w)
            print(text if text is not None else f"({task.task_id} has no {w} at stage {task.spec.stage})")
        print()
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    from kgym.tasks import TaskError
    from kgym.tasks.curriculum import CurriculumConfig
    from kgym.tasks.export import export_tasks

    if args.n < 1:
        raise _usage("--n must be at least 1")
    try:
        config = CurriculumConfig(size=args.size)
        with Progress(transient=True, console=None) as bar:
            job = bar.add_task("drawing tasks", total=args.n)
            n = export_tasks(args.n, args.out, seed=args.seed, config=config, progress=lambda: bar.advance(job))
    except TaskError as e:
        raise _usage(str(e)) from None
    except OSError as e:
        raise _usage(f"cannot write {args.out!r}: {e}") from None
    print(f"wrote {n} tasks to {args.out}")
    return 0


def cmd_decontaminate(args: argparse.Namespace) -> int:
    from kgym.tasks import TaskError, make, task_ids
    from kgym.tasks.decontaminate import Decontaminator

    try:
        d = Decontaminator(args.kernelbench, threshold=args.threshold)
        rejected = 0
        for tid in task_ids():
            worst = max((d.check(make(tid, seed, size="full")) for seed in range(args.seeds)), key=lambda o: o.score)
            rejected += worst.rejected
            mark = "REJECT" if worst.rejected else "ok"
            print(f"{tid:<28} {worst.score:.3f}  {mark:<6} nearest {worst.problem}")
    except TaskError as e:
        raise _usage(str(e)) from None
    print(f"{rejected} task ids above {args.threshold}")
    return 0


def add_parser(sub) -> None:
    t = sub.add_parser("tasks", help="list, show and export the procedural tasks; decontaminate them against "
                       "KernelBench")
    tsub = t.add_subparsers(dest="tasks_command", required=True)
    ls = tsub.add_parser("list", help="the registered task ids")
    ls.add_argument("--family", help="only this family")
    ls.set_defaults(func=cmd_list)
    sh = tsub.add_parser("show", help="one task's spec, reference and prompt")
    sh.add_argument("task_id", metavar="ID")
    sh.add_argument("--seed", type=int, required=True)
    sh.add_argument("--stage", default="full", help="full, small, scaffold or epilogue")
    sh.add_argument("--size", default="full", help="tiny, small or full")
    sh.add_argument("--source", help="data file of families that read one (KernelBook: .parquet/.jsonl)")
    sh.add_argument("--what", action="append", choices=WHAT, help="what to print (repeatable)")
    sh.set_defaults(func=cmd_show)
    ex = tsub.add_parser("export", help="draw N tasks from the curriculum into a Parquet file")
    ex.add_argument("--n", type=int, required=True)
    ex.add_argument("--seed", type=int, default=0)
    ex.add_argument("--size", default="full", help="tiny, small or full")
    ex.add_argument("--out", required=True, help="output .parquet file")
    ex.set_defaults(func=cmd_export)
    dc = tsub.add_parser("decontaminate", help="token-set Jaccard of each task against a KernelBench checkout")
    dc.add_argument("--kernelbench", required=True, help="path of a KernelBench checkout")
    dc.add_argument("--seeds", type=int, default=3, help="instances per task id to compare (default 3)")
    dc.add_argument("--threshold", type=float, default=0.6)
    dc.set_defaults(func=cmd_decontaminate)
