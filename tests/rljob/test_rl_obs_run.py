"""Watching and replaying an RL run, on one real CPU run of the RL job shared by every test here.

The run: `jobs.rl.run_rl_job` on jobs/configs/rl_tiny.toml (2 steps, a held-out evaluation before
step 1 and at step 2), the tests' tiny random model with its turns constrained to relu's scripted
answers, vLLM's CPU build, the real farm and learner; both of its exporters announced to a real
Prometheus (when the binary is there). At the driver's log line of its last step (the metrics are set,
the exporters still up) every query of the dashboard's RL row is asked. Then:

- the RL row's queries all returned data, and the values say what the records say;
- `kgym replay` prints the run's per-step, per-family, per-mode, speed and held-out tables, equal to
  what pandas reads from the Parquet directly;
- a copy of the run with a step left unfinished (rows of step 3 and a redo of step 2 written by a
  second attempt through the job's own writer, no done marker) replays exactly as the run did, listing
  the rows it left out;
- notebooks/rl_run.ipynb executes headless on that copy.

Without the `prometheus` binary the query test skips, unless KGYM_REQUIRE_PROMETHEUS=1 (CI): then it fails.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from rljob_helpers import REPO

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("vllm") is None,
                                 reason="vLLM is not installed (pip install -e '.[rollout]')")]

# Two steps show every table with more than one row (steps, the two evaluations and their comparison),
# and the unfinished copy below redoes the last and adds one past it; a third step (as until 2026-12-07)
# cost a training step's time and no assertion here needs it.
STEPS = 2


def _render_queries():
    if "render_queries" in sys.modules:
        return sys.modules["render_queries"]
    spec = importlib.util.spec_from_file_location("render_queries", REPO / "dashboards" / "render_queries.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["render_queries"] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


# what the scrape is asked besides the dashboard's queries, to compare with the records
CHECKS = ("kgym_rl_step", "kgym_rl_policy_version", "sum(kgym_rl_episodes_total)",
          'sum(kgym_rl_episodes_total{outcome="solved"})', "kgym_rl_resampled_groups_total",
          "kgym_rl_dropped_stale_samples_total", "kgym_rl_reward", 'kgym_rl_solve_rate_ratio{family="elementwise",'
          'mode="all"}', 'sum(kgym_rl_phase_seconds_total{phase="step"})', 'kgym_rl_eval_delta_pp{bound="estimate"}',
          "kgym_rl_eval_solve_rate_ratio", "sum(kgym_rl_steps_total)")


@pytest.fixture(scope="module")
def obs_run(tiny, tmp_path_factory):
    rq = _render_queries()
    root = tmp_path_factory.mktemp("rl-obs")
    model, choices = tiny  # what rq.tiny_rl_inputs(root) builds for relu, the session's (conftest.py)
    scraped: dict = {}
    prom = None
    if shutil.which("prometheus"):
        (root / "targets").mkdir()
        prom = rq.Prometheus(root, root / "targets", scrape_interval="1s")
        prom.wait_ready()

    def at_last_step() -> None:
        if prom is None:
            return
        try:  # an exception here would end the run: keep it for the test to report
            rq.wait_for(prom, "kgym_rl_step", float(STEPS))
            time.sleep(2.5)  # a scrape of every exporter after the last update
            scraped["queries"] = [(q, rq.finite_values(prom.query(rq.fill_variables(q.expr, rate_interval="10m"))))
                                  for q in rq.dashboard_queries(rows=(rq.RL_ROW,))]
            scraped["values"] = {e: rq.finite_values(prom.query(e)) for e in CHECKS}
            scraped["families"] = prom.api("label/family/values", **{"match[]": "kgym_evaluations_total"})
        except Exception as e:  # noqa: BLE001
            scraped["error"] = f"{type(e).__name__}: {e}\n{prom.tail()}"

    log: list[str] = []
    env = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "RAY_ADDRESS")}
    os.environ["OMP_NUM_THREADS"] = "1"  # Ray's workers inherit it: 2 shared cores
    os.environ.pop("RAY_ADDRESS", None)
    try:
        summary = rq.run_rl_scraped([f'model="{model}"', f'sampling.choice_file="{choices}"',
                                     f'records.out="{root / "out"}"', 'records.run_id="obs"', f"steps={STEPS}",
                                     "eval.at_start=true"], root / "targets", at_last_step, log=log.append)
    finally:
        if prom is not None:
            prom.close()
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return SimpleNamespace(path=Path(summary["run_path"]), summary=summary, scraped=scraped, log=log,
                           prometheus=prom is not None)


@pytest.fixture(scope="module")
def unfinished(obs_run, tmp_path_factory) -> Path:
    """A copy of the run as a crash during a second launch leaves it: attempt 2 wrote rows of a redo of
    the last step and of the one after it (episodes and a stats row), and no done marker for either."""
    import pyarrow.parquet as pq

    from kgym.records.rl_records import RLRecords, Table

    copy = tmp_path_factory.mktemp("rl-obs-unfinished") / "obs"
    shutil.copytree(obs_run.path, copy)
    records = RLRecords(copy)
    attempt = records.begin_attempt({"started_at": time.time(), "resumed_from": "test"})
    assert attempt == 2
    for table in (Table.ROLLOUTS, Table.STEPS):
        rows = [r for r in pq.read_table(copy / "_rl" / str(table)).to_pylist() if r["step"] == STEPS]
        for step in (STEPS, STEPS + 1):
            records.write(table, [{**{k: v for k, v in r.items() if k != "recorded_at"}, "step": step,
                                    "attempt": attempt} for r in rows])
    return copy


def _replay(path: Path, *extra: str) -> str:
    p = subprocess.run([sys.executable, "-m", "kgym.cli", "replay", str(path), *extra], capture_output=True,
                       text=True, timeout=300, cwd=REPO)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _lines(out: str) -> list[str]:
    return [" ".join(ln.split()) for ln in out.splitlines()]


def test_the_run_committed_every_step(obs_run):
    from kgym.records.rl_records import markers

    assert obs_run.summary["steps"] == STEPS and obs_run.summary["attempt"] == 1
    assert sorted(markers(obs_run.path)) == list(range(0, STEPS + 1))  # step 0: the evaluation at the start
    assert any(ln.startswith(f"jobs.rl: step {STEPS}/{STEPS} ") for ln in obs_run.log)


def test_rl_row_queries_return_data_from_prometheus(obs_run):
    import pandas as pd

    if not obs_run.prometheus:
        if os.environ.get("KGYM_REQUIRE_PROMETHEUS") == "1":
            pytest.fail("KGYM_REQUIRE_PROMETHEUS=1 but no prometheus binary on PATH (apt-get install prometheus)")
        pytest.skip("no prometheus binary on PATH (Debian: apt-get install prometheus)")
    s = obs_run.scraped
    assert "error" not in s, s.get("error")
    queries = s["queries"]
    assert len(queries) >= 19
    empty = [(q.panel, q.expr) for q, values in queries if not values]
    assert not empty, f"RL queries without data: {empty}"
    # the panels say what the records say
    rl = obs_run.path / "_rl"
    steps = pd.read_parquet(rl / "steps").sort_values("step")
    episodes = pd.read_parquet(rl / "rollouts")
    train = episodes[episodes["kind"] == "train"]
    last = steps.iloc[-1]
    v = s["values"]
    assert v["kgym_rl_step"] == [float(STEPS)]
    assert v["kgym_rl_policy_version"] == [float(last["version_after"])]
    assert v["sum(kgym_rl_steps_total)"] == [float(STEPS)]
    assert v["sum(kgym_rl_episodes_total)"] == [float(len(train))]
    assert v['sum(kgym_rl_episodes_total{outcome="solved"})'] == [float(train["solved"].sum())]
    assert v["kgym_rl_resampled_groups_total"] == [float(steps["groups_resampled"].sum())]
    assert v["kgym_rl_dropped_stale_samples_total"] == [float(steps["dropped_stale"].sum())]
    assert v["kgym_rl_reward"] == pytest.approx([last["reward_mean"]])
    scored = train[(train["step"] == STEPS) & ~train["group_resampled"] & train["error"].isna()]
    assert v['kgym_rl_solve_rate_ratio{family="elementwise",mode="all"}'] == pytest.approx([scored["solved"].mean()])
    assert v['sum(kgym_rl_phase_seconds_total{phase="step"})'] == pytest.approx([steps["step_s"].sum()])
    evals = pd.read_parquet(rl / "evals").sort_values("step")
    assert v["kgym_rl_eval_solve_rate_ratio"] == pytest.approx([evals["solve_rate"].iloc[-1]])
    assert v['kgym_rl_eval_delta_pp{bound="estimate"}'] == pytest.approx([evals["delta_pp"].iloc[-1]])
    assert s["families"] == ["elementwise"]  # the dashboard's $family variable, from the farm sink's exporter


def test_replay_prints_what_the_records_hold(obs_run, tmp_path):
    import pandas as pd

    out = _replay(obs_run.path, "--plots", str(tmp_path / "plots"))
    lines = _lines(out)
    rl = obs_run.path / "_rl"
    steps = pd.read_parquet(rl / "steps").sort_values("step")
    episodes = pd.read_parquet(rl / "rollouts")
    train = episodes[episodes["kind"] == "train"]
    scored = train[~train["group_resampled"] & train["error"].isna()]
    assert lines[0].startswith(f"RL run {obs_run.path}: {STEPS} committed steps (last {STEPS}), 1 attempt(s); "
                               f"{len(train)} training episodes ({len(scored)} scored, 0 kgym errors)")
    assert "left out (rows no done marker counts)" not in out
    assert (f"groups {int(steps['groups'].sum())}, resampled (all answers scored the same) "
            f"{int(steps['groups_resampled'].sum())}, all-equal kept {int(steps['groups_all_equal_kept'].sum())}; "
            f"samples trained {int(steps['samples_trained'].sum())}, dropped as stale "
            f"{int(steps['dropped_stale'].sum())}") in lines[2]
    for _, r in steps.iterrows():  # one row per step: step attempt status reward solve_rate ...
        assert any(ln.startswith(f"{r['step']} 1 {r['status']} {r['reward_mean']:.3f} {100 * r['solve_rate']:.1f}%")
                   for ln in lines), (r.to_dict(), out)
    fam = scored.groupby("family")
    for family, g in fam:
        assert any(ln.startswith(f"{family} {g['step'].nunique()} {len(g)} {100 * g['solved'].mean():.1f}%")
                   for ln in lines), out
    for mode, g in scored.groupby("mode"):
        assert any(ln.startswith(f"{mode} {len(g)} {100 * g['solved'].mean():.1f}%") for ln in lines), out
    evals = pd.read_parquet(rl / "evals").sort_values("step")
    e = evals.iloc[-1]
    assert any(ln.startswith(f"{e['step']} {e['policy_version']} {e['tasks']} {e['samples']} "
                             f"{100 * e['solve_rate']:.1f}%") and f"{e['delta_pp']:+.1f} {e['ci95_low_pp']:+.1f} "
               f"{e['ci95_high_pp']:+.1f}" in ln for ln in lines), out
    assert "cpu (host)" in out and "says nothing about GPU speed" in out
    assert "the farm's evaluations of the run" in out and "solve rate by family and stage:" in out
    for name in ("rl_progress.png", "rl_modes.png", "rl_speed.png", "solve_rate.png"):
        assert (tmp_path / "plots" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_unfinished_steps_are_not_counted(obs_run, unfinished):
    from kgym.records.rl_replay import load_rl, summarize_rl

    run, copy = load_rl(obs_run.path), load_rl(unfinished)
    assert list(copy.steps["step"]) == list(range(1, STEPS + 1))
    assert len(copy.episodes) == len(run.episodes) and set(copy.episodes["attempt"]) == {1}
    left = {(r.table, r.step, r.attempt, r.why) for r in copy.left_out.itertuples()}
    assert left == {("rollouts", STEPS, 2, "superseded (attempt 1 counts)"), ("steps", STEPS, 2,
                     "superseded (attempt 1 counts)"), ("rollouts", STEPS + 1, 2, "unfinished (no done marker)"),
                    ("steps", STEPS + 1, 2, "unfinished (no done marker)")}
    a, b = summarize_rl(run).to_dict(), summarize_rl(copy).to_dict()
    for key in ("per_step", "per_family", "per_mode", "windows", "speed", "phases", "held_out"):
        assert a[key] == b[key], key
    assert b["counts"]["attempts"] == 2 and b["counts"]["left_out_steps"] == [STEPS, STEPS + 1]
    out = _replay(unfinished)
    lines = _lines(out)
    assert lines[0].startswith(f"RL run {unfinished}: {STEPS} committed steps (last {STEPS}), 2 attempt(s)")
    assert f"rollouts {STEPS + 1} 2 " in "\n".join(lines) and "unfinished (no done marker)" in out
    assert not any(ln.startswith(f"{STEPS + 1} 2 ") for ln in lines), out


def test_notebook_runs_headless_on_a_run_with_an_unfinished_step(unfinished, tmp_path):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(REPO / "notebooks" / "rl_run.ipynb", as_version=4)
    old = os.environ.get("KGYM_RUN_DIR")
    os.environ["KGYM_RUN_DIR"] = str(unfinished)  # the kernel inherits the environment
    try:
        resources = {"metadata": {"path": str(tmp_path)}}
        NotebookClient(nb, timeout=300, kernel_name="python3", resources=resources).execute()
    finally:
        if old is None:
            os.environ.pop("KGYM_RUN_DIR")
        else:
            os.environ["KGYM_RUN_DIR"] = old
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 5  # progress, modes, speed, held-out, step time
    text = "".join(o.get("text", "") for o in outputs)
    assert f"{STEPS} committed steps (last {STEPS}) in {unfinished}, 2 attempt(s)" in text
    assert "families ['elementwise']" in text and "rows left out" in text
    tables = "".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "the study's v9 run" in tables and "repair" in tables
