"""The `kgym` command. Parses argv, calls the library, prints; the library never parses argv.

    kgym verify --reference REF.py --candidate CAND.py [--device auto|cpu|cuda] [--hybrid]
                [--baseline eager|compile|joint] [--seed N] [--runs N] [--json]
    kgym verify --example relu          (the bundled example: reference and a Triton answer)
    kgym verify ... [--out DIR [--run-id ID] [--job-id ID]] [--metrics-port N [--metrics-hold S]]
                                        (record the verdict as Parquet; export Prometheus metrics)
    kgym replay RUN_DIR [--plots DIR]   (solve rates, gate failures, speedups of recorded runs)
    kgym compact PATH                   (merge each partition's part files into one)
    kgym tasks list|show|export|decontaminate   (the procedural tasks; see kgym/cli_tasks.py)
    kgym eval prompts|score|compare|run   (KernelBench evaluation; see kgym/cli_eval.py)
    kgym demo [--out DIR] [--workers N] [--size S]   (the Ray farm's main job; see jobs/demo.py)

Exit status: 0 when a verdict was produced (pass or fail), 1 when kgym itself failed, 2 for bad
usage or unreadable input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from kgym import cli_eval, cli_tasks
from kgym.cli_common import UsageError

EXAMPLES = Path(__file__).parent / "examples"


def _read(path: str, what: str) -> str:
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{what} file {path!r} does not exist")
    if not p.is_file():
        raise UsageError(f"{what} path {path!r} is not a file")
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{what} file {path!r} cannot be read: {e}") from None
    if not text.strip():
        raise UsageError(f"{what} file {path!r} is empty")
    return text


def _fmt_ms(t) -> str:
    if t is None:
        return "not measured"
    mark = "" if t.stable else " (unstable)"
    cached = ", cached" if t.cached else ""
    return f"{t.median_ms:.4f} ms ±{t.spread_ms:.4f} ({t.clock}, {t.runs} runs{cached}){mark}"


def format_report(v, title: str, reward_config=None) -> str:
    from kgym.contract import GATES
    from kgym.reward import RewardConfig, reward

    reward_config = reward_config or RewardConfig()

    lines = [f"kgym verify: {title}  [device {v.device}{', hybrid' if v.hybrid else ''}]"]
    if v.error:
        lines.append("ERROR in kgym itself (not the kernel's fault):")
        lines.append(v.error)
        return "\n".join(lines)
    failed_at = GATES.index(v.gate) if v.gate in GATES else None
    details = {
        "compile": f"load {v.stages_s.get('load', 0):.2f} s",
        "launch": f"{v.launches} Triton launch(es) in the first forward"
                  + (f", {v.device_launches} confirmed on the device" if v.device_launches is not None else ""),
        "isolation": f"{v.library_calls} library call(s)" if v.hybrid else "no PyTorch compute seen",
        "correctness": f"{v.cases_passed}/{len(v.cases)} hidden cases",
        "timing": f"candidate {_fmt_ms(v.timings.get('candidate'))}",
    }
    for i, gate in enumerate(GATES):
        if v.gate in ("timeout", "crash") and (failed_at is None) and i >= _reached(v):
            status = "not run"
        elif failed_at is not None and i > failed_at:
            status = "not run"
        elif failed_at == i:
            status = "FAIL"
        else:
            status = "pass"
        extra = details.get(gate, "") if status != "not run" else ""
        lines.append(f"  {gate:<12} {status:<8} {extra}")
        if gate == "correctness" and status != "not run":
            for c in v.cases:
                err = "" if c.max_abs_err is None else f"max abs {c.max_abs_err:.3g}, max rel {c.max_rel_err:.3g}"
                lines.append(f"      {c.name:<8} {'pass' if c.passed else 'FAIL':<5} {err}  ({c.order})"
                             + (f"  {c.note}" if c.note else ""))
    if v.gate in ("timeout", "crash"):
        lines.append(f"  {v.gate.upper()}")
    if v.gate:
        lines.append(f"  reason: {v.reason}")
    if v.timings.get("eager") or v.timings.get("compile"):
        lines.append(f"  eager        {_fmt_ms(v.timings.get('eager'))}")
        lines.append(f"  compile      {_fmt_ms(v.timings.get('compile'))}")
        se = f"{v.speedup_eager:.3f}x" if v.speedup_eager is not None else "-"
        sc = f"{v.speedup_compile:.3f}x" if v.speedup_compile is not None else "-"
        lines.append(f"  speedup      vs eager {se}, vs torch.compile {sc}{'  FLAGGED (>10x)' if v.flagged else ''}")
    lines.append(f"  passed       {v.passed}")
    lines.append(f"  reward       {reward(v, reward_config):.4f} (speed baseline: {reward_config.baseline})")
    for note in v.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def _reached(v) -> int:
    """How many gates had passed when the process hung or died."""
    from kgym.contract import GATES

    if v.cases:
        return GATES.index("correctness")
    if v.launches:
        return GATES.index("isolation")
    return GATES.index("compile")


def cmd_verify(args: argparse.Namespace) -> int:
    from kgym.verify import ReferenceError, VerifyConfig, verify

    if args.example:
        folder = EXAMPLES / args.example
        if not folder.is_dir():
            names = ", ".join(sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()))
            raise UsageError(f"no bundled example {args.example!r} (have: {names})")
        args.reference = args.reference or str(folder / "reference.py")
        args.candidate = args.candidate or str(folder / "candidate.py")
    if not args.reference or not args.candidate:
        raise UsageError("give --reference and --candidate (or --example NAME)")
    ref = _read(args.reference, "reference")
    cand = _read(args.candidate, "candidate")
    try:
        # The compile baseline is measured on a GPU anyway; on the CPU only when the reward needs it.
        measure_compile = True if args.baseline in ("compile", "joint") else None
        config = VerifyConfig(device=args.device, hybrid=args.hybrid, seed=args.seed, timed_runs=args.runs,
                              timeout_s=args.timeout, measure_compile=measure_compile)
        config.resolved_device()
    except ValueError as e:
        raise UsageError(str(e)) from None
    try:
        from kgym.verify.reference import load_reference

        reference = load_reference(ref, origin=args.reference)
    except ReferenceError as e:
        raise UsageError(str(e)) from None
    if args.out is None and args.metrics_port is None:
        verdict = verify(reference, cand, config)
        _print_verdict(args, verdict)
    else:
        verdict = _verify_recorded(args, config, reference, ref, cand)  # prints before --metrics-hold
    return 1 if verdict.error else 0


def _print_verdict(args: argparse.Namespace, verdict) -> None:
    from kgym.reward import RewardConfig, reward

    cfg = RewardConfig(baseline=args.baseline)
    if args.json:
        print(json.dumps({**verdict.to_dict(), "reward": reward(verdict, cfg), "baseline": str(cfg.baseline)}),
              flush=True)
    else:
        print(format_report(verdict, f"{args.candidate} against {args.reference}", cfg), flush=True)


def _verify_recorded(args: argparse.Namespace, config, reference, ref_source: str, cand_source: str):
    """`kgym verify --out/--metrics-port`: the same verification, streamed to records and metrics."""
    import time

    from kgym.contract import EvalRequest
    from kgym.metrics import Metrics, start_exporter
    from kgym.records import RecordWriter, custom_task, verify_items
    from kgym.verify import Verifier

    task = custom_task(args.reference, ref_source, args.seed, hybrid=args.hybrid)
    metrics = exporter = writer = None
    try:
        if args.metrics_port is not None:
            metrics = Metrics()
            exporter = start_exporter(metrics, args.metrics_port, addr=args.metrics_addr)
            print(f"kgym verify: metrics on http://{args.metrics_addr}:{exporter.port}/metrics", file=sys.stderr)
        if args.out is not None:
            run_id = args.run_id or time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
            writer = RecordWriter(args.out, run_id=run_id, job_id=args.job_id)
        with Verifier(config, spares=0) as verifier:
            [done] = verify_items([EvalRequest(task, ref_source, cand_source, seed=args.seed)], verifier,
                                  writer=writer, metrics=metrics)
        if writer is not None:
            writer.close()
            print(f"kgym verify: recorded to {writer.run_path}", file=sys.stderr)
        _print_verdict(args, done.verdict)
        if exporter is not None and args.metrics_hold > 0:
            print(f"kgym verify: serving metrics for {args.metrics_hold:g} s more", file=sys.stderr)
            time.sleep(args.metrics_hold)
        return done.verdict
    except ValueError as e:  # a bad run or job id
        raise UsageError(str(e)) from None
    except OSError as e:  # port in use, unwritable --out
        raise UsageError(f"cannot record: {e}") from None
    finally:
        if exporter is not None:
            exporter.close()


def cmd_replay(args: argparse.Namespace) -> int:
    from kgym.records import load
    from kgym.records.replay import format_summary, summarize

    if not Path(args.run_dir).exists():
        raise UsageError(f"no records at {args.run_dir!r}")
    df = load(args.run_dir)
    if df.empty:
        raise UsageError(f"no part files under {args.run_dir!r}")
    print(format_summary(summarize(df)))
    if args.plots:
        from kgym.records.plots import write_plots

        for path in write_plots(df, args.plots):
            print(f"wrote {path}")
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    from kgym.records import compact

    if not Path(args.path).exists():
        raise UsageError(f"no records at {args.path!r}")
    r = compact(args.path)
    print(f"compacted {r.partitions} partition(s): {r.parts_before} -> {r.parts_after} part files, "
          f"{r.rows_before} -> {r.rows_after} rows in the rewritten partitions")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kgym", description="Verification farm and RL gym for Triton kernels")
    sub = p.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="verify one candidate against a reference (the five gates)")
    v.add_argument("--reference", help="reference module in KernelBench form (Model, get_inputs, get_init_inputs)")
    v.add_argument("--candidate", help="candidate source defining ModelNew with Triton kernels")
    v.add_argument("--example", help="use a bundled example (e.g. relu) for the paths not given")
    v.add_argument("--device", default="auto", help="auto (CUDA if present), cpu or cuda[:N]")
    v.add_argument("--hybrid", action="store_true", help="allow exactly one cuBLAS/cuDNN call in forward()")
    v.add_argument("--baseline", default="eager", choices=["eager", "compile", "joint"],
                   help="baseline of the reward's speed term")
    v.add_argument("--seed", type=int, default=0, help="public seed for the parameters (default 0)")
    v.add_argument("--runs", type=int, default=None, help="timed runs (default 100 on CUDA, 10 on CPU)")
    v.add_argument("--timeout", type=float, default=120.0, help="seconds per request to the candidate")
    v.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    v.add_argument("--out", help="records root: the verdict is written as Parquet under OUT/RUN_ID/FAMILY/")
    v.add_argument("--run-id", help="run id for --out (default: a timestamp)")
    v.add_argument("--job-id", default="verify", help="job id for --out (default: verify)")
    v.add_argument("--metrics-port", type=int, help="export Prometheus metrics on this port (0: any free one)")
    v.add_argument("--metrics-addr", default="0.0.0.0", help="address of the metrics exporter")
    v.add_argument("--metrics-hold", type=float, default=0.0,
                   help="keep serving metrics this many seconds after the verdict (for a scrape)")
    v.set_defaults(func=cmd_verify)
    r = sub.add_parser("replay", help="summarise recorded runs: solve rates, gate failures, speedups")
    r.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (or a records root, or one part file)")
    r.add_argument("--plots", metavar="DIR", help="also write PNG figures into DIR")
    r.set_defaults(func=cmd_replay)
    c = sub.add_parser("compact", help="merge each partition's part files into one (duplicates resolved)")
    c.add_argument("path", metavar="PATH", help="a records root, a run directory or a partition")
    c.set_defaults(func=cmd_compact)
    cli_tasks.add_parser(sub)
    cli_eval.add_parser(sub)
    _add_demo_parser(sub)
    return p


def _add_demo_parser(sub) -> None:
    """`kgym demo`: lives in jobs/demo.py (needs Ray: the `farm` extra); kgym itself never imports Ray."""
    d = sub.add_parser("demo", help="every family's solution, wrong answer and a few exploits through the Ray farm")
    try:
        from jobs.demo import add_arguments
    except ImportError:  # Ray (or the jobs package) missing: the subcommand says so when run
        d.add_argument("rest", nargs=argparse.REMAINDER)
    else:
        add_arguments(d)
    d.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    try:
        from jobs.demo import config_from_args, run_demo
    except ImportError as e:
        raise UsageError(f"the demo needs the farm extra (pip install -e '.[farm]'): {e}") from None
    summary = run_demo(config_from_args(args))
    return 0 if not summary.unmet and not summary.farm_errors else 1


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UsageError as e:
        print(f"kgym {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
