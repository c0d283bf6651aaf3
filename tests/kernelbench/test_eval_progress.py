"""`jobs.eval`'s progress line says why an answer did not pass: on one H100 (2026-12-07) three
KernelBench answers ended `error` / `crash` and the lines said nothing more; the records that held
the reason stayed on the machine."""

from __future__ import annotations

from jobs.eval import _why
from kgym.contract import Verdict


def test_a_crash_shows_the_exception_line():
    tb = ("Traceback (most recent call last):\n  File \"candidate.py\", line 42, in forward\n"
          "ValueError: Pointer argument (at 2) cannot be accessed from Triton (cpu tensor?)\n")
    assert _why(Verdict(passed=False, gate="crash", reason=tb)) == (
        ": ValueError: Pointer argument (at 2) cannot be accessed from Triton (cpu tensor?)")


def test_a_farm_error_shows_the_error_and_a_pass_shows_nothing():
    v = Verdict(passed=False, gate=None, reason="", error="worker lost: CUDA out of memory\n")
    assert _why(v) == ": worker lost: CUDA out of memory"
    assert _why(Verdict(passed=True, gate=None, reason="")) == ""
    assert len(_why(Verdict(passed=False, gate="isolation", reason="x" * 1000))) == 202
