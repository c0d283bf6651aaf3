"""Every PromQL query of dashboards/kgym.json returns data from a real Prometheus scraping a short
local run. Skipped without the `prometheus` binary, unless KGYM_REQUIRE_PROMETHEUS=1 (CI), where a
missing binary fails."""

import importlib.util
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from kgym.contract import EvalRequest
from kgym.metrics import Metrics, start_exporter, write_targets_file
from kgym.records import RecordWriter, verify_items

from paths import fixture_path  # tests/fixtures/paths.py (tests/conftest.py puts it on sys.path)
from records_helpers import REPO


def _render_queries():
    spec = importlib.util.spec_from_file_location("render_queries", REPO / "dashboards" / "render_queries.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["render_queries"] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def _need_prometheus() -> None:
    if shutil.which("prometheus"):
        return
    if os.environ.get("KGYM_REQUIRE_PROMETHEUS") == "1":
        pytest.fail("KGYM_REQUIRE_PROMETHEUS=1 but no prometheus binary on PATH (apt-get install prometheus)")
    pytest.skip("no prometheus binary on PATH (Debian: apt-get install prometheus)")


def _wait(prom, expr: str, want: float, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    seen = None
    while time.monotonic() < deadline:
        result = prom.query(expr)
        seen = [float(r["value"][1]) for r in result]
        if seen and seen[0] == want:
            return
        time.sleep(0.5)
    raise AssertionError(f"{expr} never reached {want} (last: {seen}): {prom.tail()}")


def test_every_dashboard_query_returns_data_from_prometheus(verifier, tmp_path: Path):
    _need_prometheus()
    rq = _render_queries()
    metrics = Metrics()
    exporter = start_exporter(metrics, 0, addr="127.0.0.1")
    write_targets_file(str(tmp_path / "targets" / "kgym.json"), [f"127.0.0.1:{exporter.port}"])
    ref, good, wrong = (fixture_path("relu", k).read_text() for k in ("reference", "good", "wrong"))
    task = {"task_id": "relu-v1", "family": "relu", "operation": "relu", "stage": "full", "seed": 0}
    items = [EvalRequest(dict(task, seed=s), ref, good, seed=s) for s in (0, 1, 2)] + [
        EvalRequest(task, ref, wrong, seed=0),
        EvalRequest({"task_id": "softmax-v1", "family": "softmax", "stage": "small", "seed": 0},
                    fixture_path("softmax", "reference").read_text(), "import os\nclass ModelNew:\n    pass\n", seed=0)]
    try:
        with rq.Prometheus(tmp_path, tmp_path / "targets", scrape_interval="1s") as prom:
            prom.wait_ready()
            _wait(prom, 'up{job="kgym"}', 1.0)  # the file_sd target is found and scraped
            with RecordWriter(tmp_path / "runs", run_id="prom", job_id="test") as w:
                done = verify_items(items, verifier, writer=w, metrics=metrics)
            assert [d.record["outcome"] for d in done] == ["passed"] * 3 + ["failed"] * 2
            _wait(prom, "sum(kgym_evaluations_total)", 5.0)
            time.sleep(1.5)  # one more scrape of the final gauges
            empty = []
            queries = rq.dashboard_queries(rows=(rq.FARM_ROW,))  # the RL row: tests/rljob/test_rl_obs_run.py
            assert len(queries) >= 12
            for q in queries:
                expr = rq.fill_variables(q.expr, rate_interval="5m")
                if not rq.finite_values(prom.query(expr)):
                    empty.append((q.panel, expr))
            assert not empty, f"queries without data: {empty}"
            # a few values, to know the panels say what happened
            assert rq.finite_values(prom.query(
                'sum(kgym_evaluations_total{outcome="failed",gate="correctness"})')) == [1.0]
            assert rq.finite_values(prom.query('kgym_solve_rate_ratio{family="relu"}')) == [0.75]
            assert rq.finite_values(prom.query('sum by (queue) (kgym_queue_depth)')) == [0.0]
            families = prom.api("label/family/values", **{"match[]": "kgym_evaluations_total"})
            assert families == ["relu", "softmax"]  # the dashboard's $family variable
    finally:
        exporter.close()
