"""Helpers for the records tests: task dicts, hand-built verdicts for pure schema/writer tests, and a
writer process that the crash test kills (run as a script)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from kgym.contract import CaseResult, Timing, Verdict

REPO = Path(__file__).resolve().parents[2]


def task(family: str = "relu", stage: str = "full", seed: int = 0, **kw) -> dict:
    d = {"task_id": f"{family}-v1", "family": family, "operation": family, "stage": stage, "seed": seed,
         "size": "tiny", "dtype": "float32", "shapes": {"x": [257, 255], "dim": -1}, "answer_mode": "triton"}
    d.update(kw)
    return d


def verdict(kind: str = "passed", speedup: float = 1.5) -> Verdict:
    """kind: passed, correctness (a wrong answer), policy, crash or error (kgym's own failure)."""
    v = Verdict(device="cpu", launches=1, stages_s={"total": 1.25, "load": 0.01})
    if kind == "error":
        return replace(v, error="Traceback: kgym broke")
    if kind == "policy":
        return v.fail("policy", "line 1: import of os is not allowed")
    if kind == "crash":
        return v.fail("crash", "the candidate's process died (SIGSEGV)")
    ok = kind == "passed"
    v = replace(v, cases=[CaseResult(n, ok or n != "x3", 0.0 if ok else 0.5, 0.0 if ok else 0.1, True,
                                     "candidate_first", "" if ok or n != "x3" else "values differ")
                          for n in ("nominal", "x3", "x0.01", "negated", "abs")])
    if not ok:
        return v.fail("correctness", "1 of 5 hidden cases failed")
    return replace(v, timings={"candidate": Timing(1.0, 0.01, 10, True, "host"),
                               "eager": Timing(speedup, 0.01, 10, True, "host"),
                               "compile": Timing(2 * speedup, 0.02, 10, True, "host", cached=True)},
                   speedup_eager=speedup, speedup_compile=2 * speedup, passed=True)


def _writer_process(root: str, big: int) -> None:
    """Write rows forever in small flushes, printing the rows made visible after each flush."""
    from kgym.records import RecordWriter, make_record

    source = "# candidate\n" + "x = 1\n" * big
    w = RecordWriter(root, run_id="crash", job_id="w", flush_rows=3, flush_seconds=60)
    i = 0
    while True:
        family = ("relu", "softmax")[i % 2]
        row = make_record(task=task(family, seed=i), candidate_source=source + f"# {i}\n",
                          verdict=verdict("passed" if i % 3 else "correctness"))
        if w.write(row):
            print(w.rows_written, flush=True)
        i += 1


if __name__ == "__main__":
    _writer_process(sys.argv[1], int(sys.argv[2]))
