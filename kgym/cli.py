"""The `kgym` command. Parses argv, calls the library, prints; the library never parses argv.

    kgym verify --reference REF.py --candidate CAND.py [--device auto|cpu|cuda] [--hybrid]
                [--baseline eager|compile|joint] [--seed N] [--runs N] [--json]
    kgym verify --example relu          (the bundled example: reference and a Triton answer)

Exit status: 0 when a verdict was produced (pass or fail), 1 when kgym itself failed, 2 for bad
usage or unreadable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parent / "examples"


class UsageError(Exception):
    pass


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


def format_report(v, title: str) -> str:
    from kgym.verify.verdict import GATES

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
    lines.append(f"  reward       {v.reward:.4f} (speed baseline: {v.baseline})")
    for note in v.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def _reached(v) -> int:
    """How many gates had passed when the process hung or died."""
    from kgym.verify.verdict import GATES

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
        config = VerifyConfig(device=args.device, hybrid=args.hybrid, baseline=args.baseline, seed=args.seed,
                              timed_runs=args.runs, timeout_s=args.timeout)
        config.resolved_device()
    except ValueError as e:
        raise UsageError(str(e)) from None
    try:
        from kgym.verify.reference import load_reference

        reference = load_reference(ref, origin=args.reference)
    except ReferenceError as e:
        raise UsageError(str(e)) from None
    verdict = verify(reference, cand, config)
    if args.json:
        print(verdict.to_json())
    else:
        print(format_report(verdict, f"{args.candidate} against {args.reference}"))
    return 1 if verdict.error else 0


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
    v.set_defaults(func=cmd_verify)
    return p


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
