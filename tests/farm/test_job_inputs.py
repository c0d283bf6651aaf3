"""jobs.verify's inputs and config without Ray workers: rows become requests with stable ids,
bad rows and configs are usage errors that name the problem, Parquet and JSONL read alike."""

from __future__ import annotations

import json

import pytest

from farm_helpers import REPO, relu_task

pytest.importorskip("ray")
from jobs.inputs import InputError, load_requests, request_from_row  # noqa: E402
from jobs.verify_config import ConfigError, load_config, parse_config  # noqa: E402
from kgym.contract import EvalRequest  # noqa: E402


def test_task_rows_and_reference_rows(tmp_path):
    t = relu_task(5)
    (tmp_path / "cand.py").write_text(t.solution)
    (tmp_path / "ref.py").write_text(t.reference)
    rows = [{"task_id": "relu-v1", "seed": 5, "size": "tiny", "candidate_path": "cand.py"},
            {"reference_path": "ref.py", "candidate": t.solution, "seed": 3}]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    a, b = load_requests(tmp_path / "in.jsonl")
    assert a.evaluation_id == EvalRequest.for_task(t, t.solution).evaluation_id
    assert (a.seed, a.overrides["hybrid"], a.task["task_id"]) == (5, False, "relu-v1")
    assert b.task["family"] == "custom" and b.seed == 3 and b.reference == t.reference
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([{"task_id": "relu-v1", "seed": 5, "size": "tiny",
                                          "candidate": t.solution}]), tmp_path / "in.parquet")
    [c] = load_requests(tmp_path / "in.parquet")
    assert c.evaluation_id == a.evaluation_id


@pytest.mark.parametrize("row, message", [
    ({"task_id": "relu-v1", "candidate": "x"}, "needs a seed"),
    ({"task_id": "relu", "seed": 1, "candidate": "x"}, "relu-v1"),
    ({"seed": 1, "candidate": "x"}, "reference_path"),
    ({"task_id": "relu-v1", "seed": 1}, "candidate"),
    ({"task_id": "relu-v1", "seed": 1, "candidate": "x", "colour": 1}, "unknown keys"),
])
def test_bad_rows_name_the_problem(row, message):
    with pytest.raises(InputError, match=message):
        request_from_row(row, default_size="tiny")


def test_config(tmp_path):
    cfg = load_config(REPO / "jobs" / "configs" / "example.toml")
    assert cfg.size == "tiny" and cfg.verify["timed_runs"] == 5 and cfg.metrics.port == 0
    assert cfg.records.run_id == "example" and cfg.records.out == "out/records"
    assert len(load_requests(REPO / cfg.input, default_size=cfg.size)) >= 1
    with pytest.raises(ConfigError, match="unknown key 'gpus'.*allowed: .*workers"):
        parse_config({"input": "x", "farm": {"gpus": 2}})
    with pytest.raises(ConfigError, match="input: required"):
        parse_config({})
    assert parse_config({"input": "x", "farm": {"quiet_mode": "pause"}}).farm.worker.quiet_mode == "pause"
    assert parse_config({"input": "x", "farm": {"quiet_mode": "wait"}}).farm.worker.quiet_mode == "wait"
    # the default: measured on the H200s; omitted in the config, it is the workers' own default
    assert parse_config({"input": "x"}).farm.worker.sandbox_options() == {}  # the sandbox's default: pause
    with pytest.raises(ConfigError, match="quiet_mode: 'nap' is not one of pause, wait"):
        parse_config({"input": "x", "farm": {"quiet_mode": "nap"}})
    (tmp_path / "bad.toml").write_text("input = [")
    with pytest.raises(ConfigError, match="not TOML"):
        load_config(tmp_path / "bad.toml")
