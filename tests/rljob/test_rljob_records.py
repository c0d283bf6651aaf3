"""The RL records' commit rule: rows count only when their step's done marker names their attempt;
a resume un-commits the steps after its checkpoint and their redo supersedes them; attempts are
numbered durably; schemas refuse rows that do not fit."""

from __future__ import annotations

import pytest

from kgym.records.rl_records import RLRecords, Table, conform, describe_table, load, read_raw


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
