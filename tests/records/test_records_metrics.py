"""Metrics: names and labels follow Prometheus' conventions, values follow the records, the exporter
serves them, and the dashboard and scrape config only use what kgym exports."""

import json
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from kgym.metrics import WORKER_STATES, Metrics, start_exporter, write_targets_file
from kgym.records import make_record

from records_helpers import REPO, task, verdict

DASHBOARDS = REPO / "dashboards"


def row(kind="passed", family="relu", stage="full", seed=0, speedup=1.5):
    return make_record(task=task(family, stage, seed), candidate_source=f"s{seed}", verdict=verdict(kind, speedup))


def value(m: Metrics, name: str, **labels) -> float | None:
    return m.registry.get_sample_value(name, labels)


def test_evaluations_are_counted_by_family_stage_gate_and_outcome():
    m = Metrics()
    for i, kind in enumerate(["passed", "passed", "correctness", "policy", "error"]):
        m.observe(row(kind, seed=i))
    m.observe(row("crash", family="softmax", stage="small"))
    assert value(m, "kgym_evaluations_total", family="relu", stage="full", gate="none", outcome="passed") == 2
    assert value(m, "kgym_evaluations_total", family="relu", stage="full", gate="correctness", outcome="failed") == 1
    assert value(m, "kgym_evaluations_total", family="relu", stage="full", gate="policy", outcome="failed") == 1
    assert value(m, "kgym_evaluations_total", family="relu", stage="full", gate="none", outcome="error") == 1
    assert value(m, "kgym_evaluations_total", family="softmax", stage="small", gate="crash", outcome="failed") == 1
    assert value(m, "kgym_verification_seconds_count", family="relu") == 5
    assert value(m, "kgym_verification_seconds_sum", family="relu") == pytest.approx(5 * 1.25, rel=1e-6)
    # speedups only of candidates that passed every case; both baselines
    assert value(m, "kgym_speedup_ratio_count", family="relu", baseline="eager") == 2
    assert value(m, "kgym_speedup_ratio_sum", family="relu", baseline="compile") == pytest.approx(6.0)
    assert value(m, "kgym_speedup_ratio_bucket", family="relu", baseline="eager", le="1.5") == 2
    assert value(m, "kgym_speedup_ratio_bucket", family="relu", baseline="eager", le="1.25") == 0
    # the kgym error is not a verdict: 2 passed of 4 verdicts
    assert value(m, "kgym_solve_rate_ratio", family="relu") == 0.5
    assert value(m, "kgym_solve_rate_ratio", family="softmax") == 0.0


def test_solve_rate_is_over_a_sliding_window_of_verdicts():
    m = Metrics(window=4)
    for i in range(4):
        m.observe(row("correctness", seed=i))
    assert value(m, "kgym_solve_rate_ratio", family="relu") == 0.0
    for i in range(3):
        m.observe(row("passed", seed=10 + i))
    assert value(m, "kgym_solve_rate_ratio", family="relu") == 0.75
    with pytest.raises(ValueError):
        Metrics(window=0)


def test_declared_series_start_at_zero_so_rate_sees_the_first_evaluation():
    m = Metrics()
    m.declare("relu", "full")
    assert value(m, "kgym_evaluations_total", family="relu", stage="full", gate="none", outcome="passed") == 0
    assert value(m, "kgym_evaluations_total", family="relu", stage="full", gate="timeout", outcome="failed") == 0
    assert value(m, "kgym_speedup_ratio_count", family="relu", baseline="compile") == 0


def test_queue_and_workers_gauges():
    m = Metrics()
    m.set_queue_depth(7)
    m.set_workers({"busy": 3, "idle": 1})
    m.set_workers({"busy": 2})
    assert value(m, "kgym_queue_depth", queue="verify") == 7
    assert [value(m, "kgym_workers", state=s) for s in WORKER_STATES] == [0, 0, 2, 0]
    with pytest.raises(ValueError, match="unknown worker states"):
        m.set_workers({"asleep": 1})


def test_names_follow_prometheus_conventions():
    m = Metrics()
    m.declare("relu", "full")
    text = generate_latest(m.registry).decode()
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    assert types["kgym_evaluations_total"] == "counter"
    assert types["kgym_verification_seconds"] == "histogram" and types["kgym_speedup_ratio"] == "histogram"
    assert types["kgym_solve_rate_ratio"] == "gauge"
    for name, kind in types.items():
        assert re.fullmatch(r"kgym_[a-z][a-z0-9_]*", name), name
        if kind == "counter":
            assert name.endswith("_total")
        else:
            assert not name.endswith("_total")


def test_exporter_serves_the_registry_over_http(tmp_path: Path):
    m = Metrics()
    m.observe(row())
    exporter = start_exporter(m, 0, addr="127.0.0.1")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{exporter.port}/metrics", timeout=5) as r:
            body = r.read().decode()
        assert 'kgym_evaluations_total{family="relu",gate="none",outcome="passed",stage="full"} 1.0' in body
    finally:
        exporter.close()
    write_targets_file(str(tmp_path / "sd" / "kgym.json"), [f"127.0.0.1:{exporter.port}"], {"run": "r1"})
    assert json.loads((tmp_path / "sd" / "kgym.json").read_text()) == [
        {"targets": [f"127.0.0.1:{exporter.port}"], "labels": {"run": "r1"}}]


def exported_names() -> set[str]:
    m = Metrics()
    m.declare("relu", "full")
    m.observe(row())
    m.set_queue_depth(0)
    m.set_workers({})
    return set(re.findall(r"^(kgym_[a-z0-9_]+)", generate_latest(m.registry).decode(), re.M))


def _panels(dash: dict) -> list[dict]:
    """The dashboard's panels without its row headers (a row panel has no query of its own)."""
    return [p for p in dash["panels"] if p.get("type") != "row"]


def dashboard_exprs() -> list[str]:
    """The farm's queries: the RL row's (kgym_rl_*, jobs/rl_metrics.py) are checked by
    tests/rljob/test_rl_obs_dashboard.py against the RL job's own metrics."""
    dash = json.loads((DASHBOARDS / "kgym.json").read_text())
    exprs = [t["expr"] for p in _panels(dash) for t in p["targets"]]
    exprs += [v["definition"] for v in dash["templating"]["list"] if v["type"] == "query"]
    return [e for e in exprs if "kgym_rl_" not in e]


def test_every_dashboard_query_uses_only_exported_metrics():
    names = exported_names()
    used = {n for e in dashboard_exprs() for n in re.findall(r"\bkgym_[a-z0-9_]+", e)}
    assert used and used <= names, used - names
    # and every metric kgym defines has a panel
    bases = {re.sub(r"_(bucket|sum|count)$", "", n) for n in names if not n.endswith("_created")}
    used_bases = {re.sub(r"_(bucket|sum|count)$", "", n) for n in used}
    assert bases <= used_bases, bases - used_bases


def test_dashboard_panels_are_well_formed():
    dash = json.loads((DASHBOARDS / "kgym.json").read_text())
    assert dash["uid"] and dash["title"] and dash["schemaVersion"] >= 36
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
    titles = " ".join(p["title"].lower() for p in _panels(dash))
    for wanted in ("solve rate", "gate failures", "speedup", "throughput", "latency", "queue", "workers"):
        assert wanted in titles
    for p in _panels(dash):
        g = p["gridPos"]
        assert 0 <= g["x"] and g["x"] + g["w"] <= 24 and p["targets"]
        assert p["datasource"]["uid"] == "${datasource}"


def test_scrape_config_and_provisioning():
    text = (DASHBOARDS / "prometheus.yml").read_text()
    assert "/tmp/ray/prom_metrics_service_discovery.json" in text and "file_sd_configs" in text
    assert "localhost:9464" in text
    ds = (DASHBOARDS / "grafana/provisioning/datasources/kgym.yml").read_text()
    assert "type: prometheus" in ds and "http://localhost:9090" in ds
    prov = (DASHBOARDS / "grafana/provisioning/dashboards/kgym.yml").read_text()
    assert "/var/lib/grafana/dashboards/kgym" in prov
    if shutil.which("promtool"):
        p = subprocess.run(["promtool", "check", "config", str(DASHBOARDS / "prometheus.yml")],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr
