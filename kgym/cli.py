"""The `kgym` command. Parses argv, calls the library, prints; the library never parses argv.

    kgym verify --reference REF.py --candidate CAND.py [--device auto|cpu|cuda] [--hybrid]
                [--baseline eager|compile|joint] [--seed N] [--runs N] [--json]
    kgym verify --example relu          (the bundled example: reference and a Triton answer)
    kgym verify ... [--out DIR [--run-id ID] [--job-id ID]] [--metrics-port N [--metrics-hold S]]
                                        (record the verdict as Parquet; export Prometheus metrics)
    kgym replay RUN_DIR [--plots DIR]   (solve rates, gate failures, speedups of recorded runs; an RL run's
                                        steps, families, modes, hybrid rate, speed and held-out evaluations)
    kgym compact PATH                   (merge each partition's part files into one)
    kgym tasks list|show|export|decontaminate   (the procedural tasks; see kgym/cli_tasks.py)
    kgym eval prompts|score|compare|run   (KernelBench evaluation; see kgym/cli_eval.py)
    kgym demo [--out DIR] [--workers N] [--size S]   (the Ray farm's main job; see jobs/demo.py)

Exit status: 0 when a verdict was produced (pass or fail), 1 when kgym itself failed, 2 for bad
usage or unreadable input (one line naming the flag or file), 141 when the reader of a pipe left early
(`kgym tasks list | head`: no traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import time
from pathlib import Path

from kgym import cli_eval, cli_tasks
from kgym.cli_common import UsageError, run_piped

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
    from kgym.reward import RewardConfig, reward

    reward_config = reward_config or RewardConfig()

    lines = [f"kgym verify: {title}  [device {v.device}{', hybrid' if v.hybrid else ''}]"]
    if v.error:
        lines.append("ERROR in kgym itself (not the kernel's fault):")
        lines.append(v.error)
        return "\n".join(lines)
    for gate, status, extra in gate_statuses(v):
        lines.append(f"  {gate:<12} {status:<8} {extra}".rstrip())
        if gate == "correctness" and v.cases:
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
        # 3 significant digits: the CPU interpreter's speedups are ~1e-4x, which .3f would print as 0.000x
        se = f"{v.speedup_eager:.3g}x" if v.speedup_eager is not None else "-"
        sc = f"{v.speedup_compile:.3g}x" if v.speedup_compile is not None else "-"
        lines.append(f"  speedup      vs eager {se}, vs torch.compile {sc}{'  FLAGGED (>10x)' if v.flagged else ''}")
    lines.append(f"  passed       {v.passed}")
    lines.append(f"  reward       {reward(v, reward_config):.4f} (speed baseline: {reward_config.baseline})")
    for note in v.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def gate_statuses(v) -> list[tuple[str, str, str]]:
    """(gate, status, detail) for each of the five gates, from what the verdict shows ran.

    A gate passed only when the verdict holds evidence of it: launches counted, hidden cases run,
    the candidate timed. A forward stopped by a tripwire before its launches were counted (a pure
    PyTorch candidate fails isolation at its first op) leaves the launch gate "unknown", not passed.
    "stopped": the gate was under way when a later check failed (some cases ran; the candidate was
    timed, then a timed-run check failed). "not run": the verdict ended before the gate began."""
    g, hung = v.gate, v.gate in ("timeout", "crash")
    cases_ran = bool(v.cases)
    all_cases = cases_ran and v.cases_passed == len(v.cases)
    candidate = v.timings.get("candidate")
    launch_detail = (f"{v.launches} Triton launch(es) in the first forward"
                     + (f", {v.device_launches} confirmed on the device" if v.device_launches is not None else ""))
    out = [("policy", "FAIL" if g == "policy" else "pass", "")]

    if g == "policy" or (hung and not (v.launches or cases_ran) and "load" not in v.stages_s):
        out.append(("compile", "not run", ""))
    else:
        out.append(("compile", "FAIL" if g == "compile" else "pass", f"load {v.stages_s.get('load', 0):.2f} s"))

    if g == "launch":
        out.append(("launch", "FAIL", launch_detail))
    elif v.launches:
        out.append(("launch", "pass", launch_detail))
    elif g in ("policy", "compile") or hung:
        out.append(("launch", "not run", ""))
    else:
        out.append(("launch", "unknown", f"no Triton launch counted: forward() was stopped by the {g} failure first"))

    iso_detail = f"{v.library_calls} library call(s)" if v.hybrid else "no PyTorch compute seen"
    if g == "isolation":
        out.append(("isolation", "FAIL", "in the timed runs, after every hidden case passed" if all_cases else ""))
    elif v.passed or g in ("correctness", "timing") or (hung and cases_ran):
        out.append(("isolation", "pass", iso_detail))
    else:
        out.append(("isolation", "not run", ""))

    cases = f"{v.cases_passed}/{len(v.cases)} hidden cases"
    if g == "correctness":
        out.append(("correctness", "FAIL", cases))
    elif all_cases and (v.passed or g in ("timing", "isolation") or hung):
        out.append(("correctness", "pass", cases))
    elif cases_ran:
        out.append(("correctness", "stopped", f"{cases} before the {g} failure"))
    else:
        out.append(("correctness", "not run", ""))

    if g == "timing":
        out.append(("timing", "FAIL", f"candidate {_fmt_ms(candidate)}"))
    elif v.passed:
        out.append(("timing", "pass", f"candidate {_fmt_ms(candidate)}"))
    elif candidate is not None:
        out.append(("timing", "stopped", f"candidate {_fmt_ms(candidate)}, then the {g} failure"))
    else:
        out.append(("timing", "not run", ""))
    return out


def check_reference(reference, path: str) -> None:
    """Call the reference's own code once before verifying: a `get_init_inputs()`, `Model(...)` or
    `get_inputs()` that raises is a bad input file (UsageError naming the file, the call and the line),
    not a failure of kgym inside the verifier.

    The calls run on PyTorch's meta device, which allocates nothing, so a reference at full size costs
    nothing here; only a call that fails there is repeated on the CPU for real (some references compute
    on their data, which meta tensors cannot), and only a failure there too is reported. The global
    RNG state is restored afterwards."""
    import torch

    def attempt(device: str) -> tuple[str, BaseException] | None:
        with torch.random.fork_rng(devices=[]), torch.device(device):
            torch.manual_seed(0)
            for call, fn in (("get_init_inputs()", reference.get_init_inputs),
                             ("Model(*get_init_inputs())", lambda: reference.Model(*reference.get_init_inputs())),
                             ("get_inputs()", reference.get_inputs)):
                try:
                    fn()
                except Exception as e:  # noqa: BLE001 - any failure of the reference's code is the file's
                    return call, e
        return None

    if attempt("meta") is None:
        return
    failed = attempt("cpu")
    if failed is None:
        return
    call, e = failed
    import traceback

    lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == reference.path]
    where = f" (line {lines[-1]})" if lines else ""
    raise UsageError(f"reference file {path!r}: {call} raised {type(e).__name__}: {e}{where}")


def _check_verify_args(args: argparse.Namespace) -> None:
    """Numbers a user can get wrong, refused by name before anything runs: a negative timeout used to
    come back as the candidate's TIMEOUT, negative runs as its "malformed timings", 0 runs as 10."""
    if args.runs is not None and args.runs < 1:
        raise UsageError(f"--runs {args.runs}: give at least 1 timed run (or leave it out: 100 on CUDA, 10 on CPU)")
    if not args.timeout > 0:  # also NaN
        raise UsageError(f"--timeout {args.timeout:g}: give a positive number of seconds (default 120)")
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65535:
        raise UsageError(f"--metrics-port {args.metrics_port}: give a port from 0 (any free one) to 65535")
    if not args.metrics_hold >= 0:
        raise UsageError(f"--metrics-hold {args.metrics_hold:g}: give 0 or more seconds")


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
    _check_verify_args(args)
    ref = _read(args.reference, "reference")
    cand = _read(args.candidate, "candidate")
    try:
        # The compile baseline is used on a GPU anyway; on the CPU only when the reward needs it. An
        # eager reward never waits for one that is not cached (docs/verify.md: defer_compile).
        measure_compile = True if args.baseline in ("compile", "joint") else None
        config = VerifyConfig(device=args.device, hybrid=args.hybrid, seed=args.seed, timed_runs=args.runs,
                              timeout_s=args.timeout, measure_compile=measure_compile,
                              defer_compile=args.baseline == "eager")
        config.resolved_device()
    except ValueError as e:
        raise UsageError(str(e)) from None
    try:
        from kgym.verify.parent.reference import load_reference

        reference = load_reference(ref, origin=args.reference)
    except ReferenceError as e:
        raise UsageError(str(e)) from None
    check_reference(reference, args.reference)
    if args.out is None and args.metrics_port is None:
        with waiting_notice(args.timeout):
            verdict = verify(reference, cand, config, zygote=not args.no_zygote)
        _print_verdict(args, verdict)
    else:
        verdict = _verify_recorded(args, config, reference, ref, cand)  # prints before --metrics-hold
    return 1 if verdict.error else 0


@contextlib.contextmanager
def waiting_notice(timeout_s: float, stream=None, first_s: float = 5.0, every_s: float = 15.0):
    """While the block runs, a line on stderr (a terminal only: logs and pipes stay as they were) after
    `first_s` and every `every_s` after, so that a candidate that hangs until --timeout is not two
    minutes of silence. Stops when the block ends."""
    stream = stream or sys.stderr
    if not stream.isatty():
        yield
        return
    done = threading.Event()
    t0 = time.monotonic()

    def tell() -> None:
        wait = first_s
        while not done.wait(wait):
            stream.write(f"kgym verify: still verifying after {time.monotonic() - t0:.0f} s (a hung candidate is "
                         f"stopped after --timeout {timeout_s:g} s per request)\n")
            stream.flush()
            wait = every_s

    thread = threading.Thread(target=tell, name="kgym-verify-notice", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


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
        with waiting_notice(args.timeout), Verifier(config, spares=0, zygote=not args.no_zygote) as verifier:
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
    from kgym.records.rl_replay import is_rl_run

    if not Path(args.run_dir).exists():
        raise UsageError(f"no records at {args.run_dir!r}")
    rl = is_rl_run(args.run_dir)
    if rl:  # an RL run (python -m jobs.rl): its steps, episodes and evaluations first, then the farm's rows
        from kgym.records.rl_replay import format_rl_summary, load_rl, summarize_rl

        run = load_rl(args.run_dir)
        print(format_rl_summary(summarize_rl(run)))
        if args.plots:
            from kgym.records.rl_plots import write_rl_plots

            for path in write_rl_plots(run, args.plots):
                print(f"wrote {path}")
    df = load(args.run_dir)
    if df.empty:
        if rl:
            return 0
        raise UsageError(f"no part files under {args.run_dir!r}")
    if rl:
        print("\nthe farm's evaluations of the run (every submission, training and held-out):")
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
    v.add_argument("--no-zygote", action="store_true",
                   help="start the candidate's process cold (Popen), not forked from a zygote (docs/spares.md)")
    v.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    v.add_argument("--out", help="records root: the verdict is written as Parquet under OUT/RUN_ID/FAMILY/")
    v.add_argument("--run-id", help="run id for --out (default: a timestamp)")
    v.add_argument("--job-id", default="verify", help="job id for --out (default: verify)")
    v.add_argument("--metrics-port", type=int, help="export Prometheus metrics on this port (0: any free one)")
    v.add_argument("--metrics-addr", default="0.0.0.0", help="address of the metrics exporter")
    v.add_argument("--metrics-hold", type=float, default=0.0,
                   help="keep serving metrics this many seconds after the verdict (for a scrape)")
    v.set_defaults(func=cmd_verify)
    r = sub.add_parser("replay", help="summarise recorded runs: solve rates, gate failures, speedups (and an RL "
                       "run's steps, families, modes, hybrid rate, speed and held-out evaluations)")
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
    from kgym.settings import ConfigError

    try:
        summary = run_demo(config_from_args(args))
    except ConfigError as e:  # found once the config is read: an unwritable records.out, a farm Ray cannot serve
        raise UsageError(str(e)) from None
    return 0 if not summary.unmet and not summary.farm_errors else 1


def main(argv: list[str] | None = None) -> int:
    return run_piped(lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:2] == ["eval", "run"]:
        # the batch job parses its own options: argparse's REMAINDER refused a first one that starts
        # with "--" (`kgym eval run --kernelbench DIR` was "unrecognized arguments")
        rest = argv[3:] if argv[2:3] == ["--"] else argv[2:]  # the old spelling, `kgym eval run -- ...`, too
        return cli_eval.cmd_run(argparse.Namespace(rest=rest))
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UsageError as e:
        print(f"kgym {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
