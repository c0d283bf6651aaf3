"""The dashboard's RL row, without a run: it uses only the RL job's metrics, covers what the RL job's
issue asks to watch, lays out without overlaps, and every query is valid PromQL to a real Prometheus.
(That each query returns the run's values is tests/rljob/test_rl_obs_run.py, on a real run.)"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys

import pytest
from rljob_helpers import REPO

DASHBOARD = REPO / "dashboards" / "kgym.json"
SUFFIXES = ("_total", "_bucket", "_sum", "_count")


def _render_queries():
    if "render_queries" in sys.modules:
        return sys.modules["render_queries"]
    spec = importlib.util.spec_from_file_location("render_queries", REPO / "dashboards" / "render_queries.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["render_queries"] = mod
    spec.loader.exec_module(mod)
    return mod


def _family(name: str) -> str:
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def test_rl_row_uses_only_the_rl_metrics():
    from jobs.rl_metrics import metric_names

    rq = _render_queries()
    defined = set(metric_names())
    queries = rq.dashboard_queries(rows=(rq.RL_ROW,))
    assert len(queries) >= 19
    for q in queries:
        rq.fill_variables(q.expr)  # no variable Grafana would not fill
        names = set(re.findall(r"\bkgym_[a-z_]+", q.expr))
        assert names, q
        unknown = {n for n in names if _family(n) not in defined}
        assert not unknown, (q.panel, unknown)
    farm = rq.dashboard_queries(rows=(rq.FARM_ROW,))
    assert farm and not any("kgym_rl_" in q.expr for q in farm)
    assert len(rq.dashboard_queries()) == len(queries) + len(farm)  # every panel sits in one of the two rows


def test_rl_row_shows_what_the_issue_asks_for():
    rq = _render_queries()
    exprs = [q.expr for q in rq.dashboard_queries(rows=(rq.RL_ROW,))]
    text = "\n".join(exprs)
    for metric in ("kgym_rl_reward", "kgym_rl_entropy", "kgym_rl_kl", "kgym_rl_clip_fraction_ratio",
                   "kgym_rl_generation_tokens_per_second", "kgym_rl_generated_tokens_total",
                   "kgym_rl_staleness_versions", "kgym_rl_dropped_stale_samples_total",
                   "kgym_rl_resampled_groups_total", "kgym_rl_eval_delta_pp"):
        assert metric in text, metric
    assert 'kgym_rl_solve_rate_ratio{family=~"$family",mode="all"}' in text  # by family
    assert any("sum by (mode)" in e and "kgym_rl_episodes_total" in e for e in exprs)  # by mode
    split = [e for e in exprs if "kgym_rl_step_seconds_sum" in e]
    assert split and all(p in split[0] for p in ("generation", "verification", "learning", "sync"))


def test_panels_do_not_overlap_and_sit_under_their_row():
    dash = json.loads(DASHBOARD.read_text())
    panels = dash["panels"]
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids))
    cells = {}
    for p in panels:
        g = p["gridPos"]
        assert 0 <= g["x"] and g["x"] + g["w"] <= 24, p["title"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, (p["title"], cells.get((x, y)))
                cells[(x, y)] = p["title"]
    rows = [p for p in panels if p["type"] == "row"]
    assert [r["title"] for r in rows] == ["Verification farm", "RL"]
    assert all(not r["collapsed"] and r["panels"] == [] for r in rows)  # an expanded row lists nothing itself
    rl_y = rows[1]["gridPos"]["y"]
    after = panels[panels.index(rows[1]) + 1:]
    assert after and all(p["gridPos"]["y"] > rl_y for p in after)
    assert all(p["gridPos"]["y"] < rl_y for p in panels[:panels.index(rows[1])])


def test_rl_row_queries_are_valid_promql(tmp_path):
    """A real Prometheus without targets answers every query (an empty result), or names the error."""
    rq = _render_queries()
    if not shutil.which("prometheus"):
        if os.environ.get("KGYM_REQUIRE_PROMETHEUS") == "1":
            pytest.fail("KGYM_REQUIRE_PROMETHEUS=1 but no prometheus binary on PATH")
        pytest.skip("no prometheus binary on PATH (Debian: apt-get install prometheus)")
    (tmp_path / "targets").mkdir()
    with rq.Prometheus(tmp_path, tmp_path / "targets") as prom:
        prom.wait_ready()
        bad = []
        for q in rq.dashboard_queries(rows=(rq.RL_ROW,)):
            try:
                prom.query(rq.fill_variables(q.expr, rate_interval="1m"))
            except Exception as e:  # noqa: BLE001 - urllib's HTTPError 400 for a parse error
                bad.append((q.panel, q.expr, str(e)))
        assert not bad, bad
        with pytest.raises(Exception, match="400"):  # the check would see a broken query
            prom.query("sum by (phase (kgym_rl_step")
