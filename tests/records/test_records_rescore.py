"""Re-scoring stored records: a row read back from Parquet gives the reward the live run recorded,
and, under a second RewardConfig, the reward that config gives the original verdict."""

from dataclasses import replace

import pytest

from kgym.records import RecordWriter, load, make_record, rescore, verdict_from_record
from kgym.reward import RewardConfig, reward

from records_helpers import task, verdict

KINDS = ("passed", "correctness", "policy", "crash", "error")


def _verdicts():
    out = []
    for i, kind in enumerate(KINDS):
        v = verdict(kind, speedup=1.2 + i)
        out.append(replace(v, notes=(*v.notes, f"note {i}")))  # a non-empty list column (numpy arrays once
        # pandas reads them)
    return out


def test_stored_rows_rescore_to_the_recorded_reward_and_under_another_config(tmp_path):
    live = RewardConfig()
    other = RewardConfig(baseline="compile", speed_cap=2.0, correctness_weight=0.4, speed_weight=0.6)
    verdicts = _verdicts()
    with RecordWriter(tmp_path, run_id="r", job_id="tests") as w:
        for i, v in enumerate(verdicts):
            w.write(make_record(task=task(seed=i), candidate_source=f"src {i}", verdict=v, reward_config=live))
    df = load(tmp_path / "r").sort_values("task_seed")
    assert len(df) == len(verdicts)
    for (_, row), v in zip(df.iterrows(), verdicts):
        assert row["baseline"] == "eager"
        assert rescore(row, RewardConfig(baseline=row["baseline"])) == pytest.approx(row["reward"], abs=1e-12)
        assert rescore(row, other) == pytest.approx(reward(v, other), abs=1e-12)
        back = verdict_from_record(row)
        assert back.gate == v.gate and back.error == v.error and back.notes == v.notes
        assert back.fraction_passed == v.fraction_passed
    # the second config changes what the passing answer earns, so the test can tell the two apart
    passed = df.iloc[0]
    assert rescore(passed, other) != pytest.approx(passed["reward"])


def test_a_row_whose_baseline_was_unstable_rescores_without_speed_credit(tmp_path):
    """Red team by class (2026-12-07): a row keeps no baseline's stability, and a rebuilt verdict counted
    every baseline as stable, so a passing answer timed against an unstable eager baseline (the verdict
    paid it no speed) rescored with full speed credit. The verifier's note about the unstable baseline is
    stored with the row and is read back as its instability. Honest: a stable baseline's row keeps its
    speed credit (the test above)."""
    from kgym.contract import Timing
    from kgym.contract.verdict import unstable_baseline_note

    v = verdict("passed", speedup=3.0)
    eager = Timing(3.0, 0.9, 10, False, "host")  # over the variation gate, under its median
    v = replace(v, timings={**v.timings, "eager": eager},
                notes=(*v.notes, unstable_baseline_note("eager", eager)))
    live = RewardConfig()
    assert reward(v, live) == pytest.approx(live.correctness_weight)  # no speed credit live
    with RecordWriter(tmp_path, run_id="r", job_id="tests") as w:
        w.write(make_record(task=task(seed=0), candidate_source="src", verdict=v, reward_config=live))
    row = load(tmp_path / "r").iloc[0]
    assert rescore(row, live) == pytest.approx(row["reward"], abs=1e-12) == pytest.approx(reward(v, live))
    assert not verdict_from_record(row).timings["eager"].stable
    # schema 2 keeps it as a column, which is what a rescore reads first; a schema-1 row (no column)
    # falls back to the note
    assert row["eager_stable"] is False or row["eager_stable"] == False  # noqa: E712 - numpy bool
    no_note = dict(row, notes=[])
    assert not verdict_from_record(no_note).timings["eager"].stable
    assert rescore(no_note, live) == pytest.approx(live.correctness_weight)
    old = dict(row, eager_stable=None)
    assert not verdict_from_record(old).timings["eager"].stable
    assert verdict_from_record(dict(old, notes=[])).timings["eager"].stable
