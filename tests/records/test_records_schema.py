"""Rows: the evaluation id is deterministic and covers every input; rows fit the versioned schema."""

import pyarrow as pa
import pytest

from kgym.contract import VERIFIER_VERSION
from kgym.records import SCHEMA, SCHEMA_VERSION, custom_task, evaluation_id, make_record
from kgym.records.record import Episode
from kgym.records.schema import COLUMN_NAMES, conform, describe
from kgym.reward import reward

from records_helpers import task, verdict


def test_evaluation_id_is_deterministic_and_names_task_candidate_seed_and_verifier():
    base = evaluation_id(task(), "src", 0)
    assert base == evaluation_id(dict(reversed(list(task().items()))), "src", 0)  # key order does not matter
    assert len(base) == 32 and int(base, 16) >= 0
    others = {evaluation_id(task(seed=1), "src", 0), evaluation_id(task(), "src2", 0), evaluation_id(task(), "src", 1),
              evaluation_id(task(), "src", 0, verifier_version=VERIFIER_VERSION + "-next"),
              evaluation_id(task(stage="small"), "src", 0), evaluation_id(task(shapes={"x": [3]}), "src", 0)}
    assert base not in others and len(others) == 6


def _full_row(row: dict) -> dict:
    import datetime as dt

    return dict(row, schema_version=SCHEMA_VERSION, run_id="r", job_id="j", recorded_at=dt.datetime.now(dt.UTC))


@pytest.mark.parametrize("kind,outcome,gate", [("passed", "passed", None), ("correctness", "failed", "correctness"),
                                               ("policy", "failed", "policy"), ("crash", "failed", "crash"),
                                               ("error", "error", None)])
def test_rows_of_every_outcome_fit_the_schema(kind, outcome, gate):
    row = make_record(task=task(), candidate_source="src", verdict=verdict(kind), started_at=1.0e9,
                      finished_at=1.0e9 + 2)
    assert row["outcome"] == outcome and row["gate"] == gate
    assert row["evaluation_id"] == evaluation_id(task(), "src", 0)
    table = conform([_full_row(row)])
    assert table.schema.equals(SCHEMA) and table.num_rows == 1
    if kind == "passed":
        assert row["speedup_compile"] == 3.0 and row["eager_ms"] == 1.5 and row["cases_passed"] == 5
        assert row["reward"] == reward(verdict(kind)) and row["timing_clock"] == "host"
    if kind == "correctness":
        assert row["cases_passed"] == 4 and row["cases"][1]["note"] == "values differ"


def test_episode_reward_seed_and_worker_fields():
    from kgym.records import WorkerInfo

    w = WorkerInfo.here("cpu", worker_id="verifier-0")
    row = make_record(task=task(seed=7), candidate_source="s", verdict=verdict(), reward=0.25, worker=w,
                      episode=Episode("g1", 3, turn=1))
    assert (row["group_id"], row["sample_index"], row["turn"]) == ("g1", 3, 1)
    assert row["reward"] == 0.25 and row["verify_seed"] == 7 and row["task_seed"] == 7
    assert row["worker_id"] == "verifier-0" and row["torch_version"] and row["gpu_name"] is None
    assert make_record(task=task(seed=7), candidate_source="s", verdict=verdict(), seed=3)["verify_seed"] == 3
    assert row["shapes_json"] == '{"dim":-1,"x":[257,255]}'


def test_bad_tasks_and_rows_are_refused():
    with pytest.raises(ValueError, match="task_id and family"):
        make_record(task={"family": "relu"}, candidate_source="s", verdict=verdict())
    with pytest.raises(ValueError, match="plain JSON"):
        make_record(task=task(shapes={"x": object()}), candidate_source="s", verdict=verdict())
    row = _full_row(make_record(task=task(), candidate_source="s", verdict=verdict()))
    with pytest.raises(ValueError, match="may not be null"):
        conform([dict(row, family=None)])
    with pytest.raises(ValueError, match="unknown columns"):
        conform([dict(row, extra=1)])
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError)):
        conform([dict(row, cases_passed="five")])


def test_schema_is_versioned_in_one_place():
    assert SCHEMA.metadata[b"kgym.schema_version"] == str(SCHEMA_VERSION).encode()
    assert list(SCHEMA.names) == list(COLUMN_NAMES)
    text = describe()
    assert all(f"`{name}`" in text for name in COLUMN_NAMES)


def test_custom_task_of_a_bare_verify():
    t = custom_task("some/dir/my_relu.py", "class Model: ...", seed=4, hybrid=True)
    assert t["family"] == "custom" and t["operation"] == "my_relu" and t["stage"] == "full" and t["seed"] == 4
    assert t["answer_mode"] == "hybrid" and t["task_id"].startswith("custom-my_relu-")
    assert custom_task("my_relu.py", "other reference", seed=4)["task_id"] != t["task_id"]


def test_a_real_task_spec_is_recorded_whole():
    """kgym.tasks' TaskSpec.to_dict() carries keys beyond the columns (distribution, source,
    spec_version): they are part of the evaluation id and kept in task_json."""
    import json

    tasks = pytest.importorskip("kgym.tasks")
    spec = tasks.make("relu-v1", seed=3, size="tiny").spec
    row = make_record(task=spec.to_dict(), candidate_source="s", verdict=verdict())
    assert (row["task_id"], row["family"], row["operation"], row["size"]) == ("relu-v1", spec.family, "relu", "tiny")
    assert tasks.TaskSpec.from_dict(json.loads(row["task_json"])) == spec
    other = dict(spec.to_dict(), distribution={"scale": 2.0, "shift": 0.0})
    assert make_record(task=other, candidate_source="s", verdict=verdict())["evaluation_id"] != row["evaluation_id"]
    assert conform([_full_row(row)]).num_rows == 1
