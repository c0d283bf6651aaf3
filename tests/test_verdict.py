"""The verdict is a frozen value (issue 32): `fail` returns a new one under the first-gate rule, its
dict and JSON forms are what they were, and the verifier's mutable draft (`VerdictDraft`) has the
verdict's fields and defaults, so the verdict it freezes is what the same steps made before."""

from __future__ import annotations

import dataclasses
import json

import pytest

from kgym.contract import CaseResult, Gate, Timing, Verdict
from kgym.verify.parent.verdict_draft import VerdictDraft


def test_a_verdict_cannot_be_changed():
    v = Verdict(cases=[CaseResult("nominal", True)], notes=["a"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.passed = True  # type: ignore[misc]
    assert v.cases == (CaseResult("nominal", True),) and v.notes == ("a",)  # lists given are kept as tuples
    with pytest.raises(AttributeError):
        v.notes.append("b")  # type: ignore[attr-defined]


def test_the_first_failing_gate_decides_and_a_later_one_adds_a_note():
    v = Verdict()
    once = v.fail("correctness", "1 of 6 hidden cases failed")
    assert v.gate is None and v.notes == ()  # the original is untouched
    assert (once.gate, once.reason, once.passed) == (Gate.CORRECTNESS, "1 of 6 hidden cases failed", False)
    twice = once.fail("isolation", "timed run 3: wrong output")
    assert (twice.gate, twice.reason) == (Gate.CORRECTNESS, "1 of 6 hidden cases failed")
    assert twice.notes == ("isolation: timed run 3: wrong output",)
    assert twice.fail("timing", "hidden cases failed").notes == twice.notes  # nothing new: no note
    with pytest.raises(ValueError, match="unknown gate"):
        v.fail("speed", "x")


def test_the_dict_and_json_forms_keep_their_lists_and_round_trip():
    v = Verdict(passed=False, gate=Gate.CORRECTNESS, reason="r", cases=[CaseResult("nominal", True, 0.0, 0.0, True)],
                timings={"candidate": Timing(1.0, 0.01, 10, True, "host"), "compile": None},
                stages_s={"total": 1.0}, notes=["n"])
    d = v.to_dict()
    assert isinstance(d["cases"], list) and isinstance(d["notes"], list) and d["cases_passed"] == 1
    assert d["gate"] == "correctness" and d["notes"] == ["n"]
    assert Verdict.from_dict(json.loads(v.to_json())) == v


def test_the_draft_has_the_verdicts_fields_and_defaults():
    verdict = {f.name: f for f in dataclasses.fields(Verdict)}
    draft = {f.name: f for f in dataclasses.fields(VerdictDraft)}
    assert set(draft) == set(verdict) - {"verifier_version"}
    assert VerdictDraft().done() == Verdict()


def test_a_draft_freezes_to_the_verdict_the_same_steps_give():
    d = VerdictDraft(device="cuda:0", hybrid=True)
    d.cases.append(CaseResult("nominal", True, 0.0, 0.0, True))
    d.add_stage("kept_state", 0.25)
    d.add_stage("kept_state", 0.5)
    d.notes.append("a note")
    d.fail("correctness", "first")
    d.fail("isolation", "second")
    v = d.done()
    frozen_steps = Verdict(device="cuda:0", hybrid=True, cases=[CaseResult("nominal", True, 0.0, 0.0, True)],
                           stages_s={"kept_state": 0.75}, notes=["a note"])
    assert v == frozen_steps.fail("correctness", "first").fail("isolation", "second")
    assert (v.gate, v.reason, v.notes) == (Gate.CORRECTNESS, "first", ("a note", "isolation: second"))
    assert v.stages_s == {"kept_state": 0.75} and v.cases_passed == 1 and not v.passed
    d.notes.append("later")
    d.stages_s["total"] = 9.0
    assert v.notes == ("a note", "isolation: second") and "total" not in v.stages_s  # copies, not the draft's
