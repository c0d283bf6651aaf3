"""The record sink's core without Ray (`kgym.records.sink_core`): one verdict per evaluation id
against what the run holds on disk, an "error" row never shadowing a verdict, the flush timer, the
summary, farm results scored into rows and baseline rows. The actor over it (`ray_cluster.RecordSink`)
is exercised with Ray in tests/farm/test_service.py and test_prefetch.py."""

import time

from kgym.contract import EvalRequest, EvalResult, Timing
from kgym.records import load, make_record, record_of
from kgym.records.baseline_table import baseline_row, load_baselines
from kgym.records.sink_core import SinkCore, recorded_verdict_ids
from kgym.reward import RewardConfig
from kgym.sink_config import RecordsConfig

from records_helpers import task, verdict


def row(seed: int, kind: str = "passed", family: str = "relu") -> dict:
    """A row whose evaluation id depends only on (family, seed): rows of one seed share an id."""
    return make_record(task=task(family, seed=seed), candidate_source=f"src {seed}", verdict=verdict(kind))


def config(root, run_id: str = "r", **kw) -> RecordsConfig:
    return RecordsConfig(out=str(root), run_id=run_id, job_id="t", **{"flush_rows": 1, **kw})


def test_a_second_row_for_an_id_is_dropped_and_counted(tmp_path):
    seen = []
    core = SinkCore(config(tmp_path), on_row=lambda r: seen.append(r["evaluation_id"]))
    rows = [row(0), row(1), row(0), row(1, "correctness")]
    assert core.write(rows) == 2
    summary = core.close()
    assert (summary.rows_written, summary.dropped_duplicates, summary.recorded) == (2, 2, 2)
    assert summary.run_path == core.writer.run_location.uri
    assert seen == [rows[0]["evaluation_id"], rows[1]["evaluation_id"]]  # only rows written, in order
    assert sorted(load(tmp_path / "r")["evaluation_id"]) == sorted(seen)


def test_a_resumed_run_skips_the_ids_on_disk(tmp_path):
    first = SinkCore(config(tmp_path))
    first.write([row(0), row(1)])
    first.close()
    core = SinkCore(config(tmp_path))
    assert core.recorded_ids() == sorted([row(0)["evaluation_id"], row(1)["evaluation_id"]])
    assert core.write([row(0, "correctness"), row(1), row(2)]) == 1
    summary = core.close()
    assert (summary.rows_written, summary.dropped_duplicates, summary.recorded) == (1, 2, 3)
    assert len(load(tmp_path / "r", deduplicate=False)) == 3


def test_an_error_row_never_shadows_a_verdict(tmp_path):
    core = SinkCore(config(tmp_path))
    assert core.write([row(0, "error")]) == 1  # no row for the id yet: kept
    assert core.write([row(0, "error")]) == 0  # a second error adds nothing
    assert core.write([row(0)]) == 1  # the verdict is still written
    assert core.write([row(0, "error"), row(0, "correctness")]) == 0
    assert core.write([row(1), row(1, "error")]) == 1  # after a verdict, an error is dropped
    assert core.recorded_ids() == sorted([row(0)["evaluation_id"], row(1)["evaluation_id"]])
    core.close()
    kept = load(tmp_path / "r")
    assert list(kept.set_index("evaluation_id").loc[row(0)["evaluation_id"], ["outcome"]]) == ["passed"]


def test_errors_on_disk_leave_the_id_open_for_a_verdict(tmp_path):
    first = SinkCore(config(tmp_path))
    first.write([row(0, "error"), row(1, "error"), row(1)])
    first.close()
    verdicts, errors = recorded_verdict_ids(tmp_path / "r")
    assert (verdicts, errors) == ({row(1)["evaluation_id"]}, {row(0)["evaluation_id"]})
    core = SinkCore(config(tmp_path))
    assert core.write([row(0, "error"), row(1, "error")]) == 0
    assert core.write([row(0, "crash")]) == 1
    assert core.close().recorded == 2


def test_recorded_ids_of_a_run_that_does_not_exist(tmp_path):
    assert recorded_verdict_ids(tmp_path / "nothing") == (set(), set())


def test_the_timer_makes_a_lone_row_durable_and_close_stops_it(tmp_path):
    core = SinkCore(config(tmp_path, flush_rows=1000, flush_seconds=0.2))
    core.write([row(0)])
    assert core.writer.buffered == 1
    deadline = time.monotonic() + 10
    while core.writer.buffered and time.monotonic() < deadline:
        time.sleep(0.05)
    assert core.writer.buffered == 0 and len(load(tmp_path / "r")) == 1  # no flush was called
    core.close()
    core._flusher.join(timeout=5)
    assert not core._flusher.is_alive()


def test_farm_results_are_scored_under_the_cores_reward(tmp_path):
    reward = RewardConfig(correctness_weight=0.9, speed_weight=0.1)
    core = SinkCore(config(tmp_path), reward)
    request = EvalRequest(task=task(seed=3), reference="ref", candidate="cand", seed=3)
    result = EvalResult(request=request, verdict=verdict("correctness"), worker=None, attempts=1, verify_s=1.0,
                        latency_s=1.5)
    assert core.write_results([result, result]) == 1
    core.close()
    df = load(tmp_path / "r")
    assert list(df["evaluation_id"]) == [request.evaluation_id]
    assert list(df["reward"]) == [record_of(result, reward)["reward"]]
    assert record_of(result, reward)["reward"] != record_of(result)["reward"]  # the config made a difference


def test_baseline_rows_go_to_the_runs_baselines_table(tmp_path):
    core = SinkCore(config(tmp_path, flush_rows=100))
    b = baseline_row(task=task(), seed=0, kind="eager", timing=Timing(1.0, 0.1, 5, True, "host"), source="deferred",
                     device="cpu", worker=None, seconds=1.0)
    assert core.write_baselines([b, b]) == 2
    assert core.flush() == 0  # no verdict rows; the baselines are flushed too
    assert len(load_baselines(tmp_path / "r")) == 2
    core.close()
