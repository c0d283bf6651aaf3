"""The RL records' commit rule: rows count only when their step's done marker names their attempt;
a resume un-commits the steps after its checkpoint and their redo supersedes them; attempts are
numbered durably; schemas refuse rows that do not fit. The step row is a contract type
(`kgym.contract.rl_step.StepRow`) whose fields make the steps table's schema: the same schema as
before it was one (recorded at 8fc8288), so old logs read back the same."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kgym.contract.rl_step import StepRow
from kgym.records.rl_records import RLRecords, Table, conform, describe_table, load, read_raw, schema

BEFORE = Path(__file__).resolve().parents[1] / "fixtures" / "rl_step_schema_before.json"


def step_row(attempt: int, step: int, **kw) -> dict:
    row = {"run_id": "r", "attempt": attempt, "step": step, "status": "ok", "version_before": step - 1,
           "version_after": step, "learner_step": step, "tasks": 1, "groups": 1, "groups_resampled": 0,
           "groups_all_equal_kept": 0, "episodes": 8, "episodes_error": 0, "samples_trained": 8, "dropped_stale": 0,
           "floor_full": 0.25, "train_tokens": 10, "generated_tokens": 10, "rollout_s": 1.0, "generation_s": 0.5,
           "verification_s": 0.5, "verify_busy_s": 1.0, "verifications": 2, "learning_s": 1.0, "sync_s": 0.1,
           "checkpoint_s": 0.1, "eval_s": 0.0, "step_s": 2.0}
    row.update(kw)
    return row


def test_only_committed_attempts_count(tmp_path):
    run = tmp_path / "run"
    rec = RLRecords(run)
    assert rec.begin_attempt({}) == 1
    for s in (1, 2, 3):
        rec.write(Table.STEPS, [step_row(1, s, reward_mean=0.1 * s)])
        if s < 3:  # the driver dies after writing step 3's rows, before its marker
            rec.commit(s, {})
    assert list(load(run, Table.STEPS)["step"]) == [1, 2]
    assert len(read_raw(run, Table.STEPS)) == 3

    # resume from the checkpoint of step 1 (say every = 1 but step 2's checkpoint was lost)
    rec2 = RLRecords(run)
    assert rec2.begin_attempt({"resumed_from": "step-000001"}) == 2
    assert rec2.drop_markers_after(1) == [2]
    assert list(load(run, Table.STEPS)["step"]) == [1]
    for s in (2, 3):
        rec2.write(Table.STEPS, [step_row(2, s, reward_mean=0.5)])
        rec2.commit(s, {})
    got = load(run, Table.STEPS)
    assert list(got["step"]) == [1, 2, 3] and list(got["attempt"]) == [1, 2, 2]  # each step once
    assert len(read_raw(run, Table.STEPS)) == 5  # the abandoned rows are still on disk
    assert [a["attempt"] for a in rec2.attempts()] == [1, 2]


def test_rows_must_name_the_writing_attempt_and_fit_the_schema(tmp_path):
    rec = RLRecords(tmp_path / "run")
    with pytest.raises(RuntimeError, match="begin_attempt"):
        rec.write(Table.STEPS, [step_row(1, 1)])
    rec.begin_attempt({})
    with pytest.raises(ValueError, match="attempt 7"):
        rec.write(Table.STEPS, [step_row(7, 1)])
    with pytest.raises(ValueError, match="unknown column"):
        conform(Table.STEPS, [step_row(1, 1, surprise=1)])
    bad = step_row(1, 1)
    del bad["status"]
    with pytest.raises(ValueError, match="status"):
        conform(Table.STEPS, [bad])


def test_no_hidden_temp_files_and_rl_rows_stay_out_of_the_evaluation_reader(tmp_path):
    from kgym.records import load as load_evaluations

    run = tmp_path / "run"
    rec = RLRecords(run)
    rec.begin_attempt({})
    rec.write(Table.STEPS, [step_row(1, 1)])
    rec.commit(1, {})
    assert not [p for p in run.rglob(".*")]
    assert len(load_evaluations(run)) == 0  # the `_rl` tables are not evaluation rows


def test_schema_tables_render():
    for t in Table:
        text = describe_table(t)
        assert text.count("\n") > 10 and "`step`" in text


def test_the_step_row_type_makes_the_schema_the_steps_table_had():
    """Same names, order, Arrow types, nullability, docs and metadata as the hand-written schema the
    old driver's dict rows were checked against: old logs replay the same."""
    before = json.loads(BEFORE.read_text())
    s = schema(Table.STEPS)
    assert [[f.name, str(f.type), f.nullable] for f in s] == before["fields"]
    assert {k.decode(): v.decode() for k, v in s.metadata.items()} == before["metadata"]
    from kgym.records.rl_records import STEP_COLUMNS

    assert {n: d for n, _, _, d in STEP_COLUMNS} == before["docs"]
    # every field is a column; the columns it does not hold are the writer's own
    names = [f.name for f in dataclasses.fields(StepRow)]
    assert [n for n, *_ in STEP_COLUMNS if n not in names] == ["rl_schema_version", "recorded_at"]
    # required fields are exactly the non-null columns
    required = {f.name for f in dataclasses.fields(StepRow) if f.default is dataclasses.MISSING}
    assert required == {n for n, _, null, _ in STEP_COLUMNS if not null} - {"rl_schema_version", "recorded_at"}


def test_a_step_row_round_trips_through_parquet_and_reads_old_rows(tmp_path):
    run = tmp_path / "run"
    rec = RLRecords(run)
    rec.begin_attempt({})
    row = StepRow.from_row(step_row(1, 1, reward_mean=0.25, kl=0.01, checkpoint="c/step-000001"))
    assert conform(Table.STEPS, [row.to_row()]).drop(["recorded_at"]).equals(
        conform(Table.STEPS, [step_row(1, 1, reward_mean=0.25, kl=0.01, checkpoint="c/step-000001")])
        .drop(["recorded_at"]))  # the typed row writes what the dict wrote
    rec.write(Table.STEPS, [row.to_row()])
    rec.commit(1, {})
    (back,) = [StepRow.from_row(r) for r in load(run, Table.STEPS).to_dict("records")]
    assert back == row
    with pytest.raises(TypeError):
        StepRow.from_row({k: v for k, v in step_row(1, 1).items() if k != "status"})  # a required column
