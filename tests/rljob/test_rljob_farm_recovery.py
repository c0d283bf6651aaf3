"""The RL job survives the death of its farm service (the Ray actor that queues every verification),
on the CPU with every part real (a tiny random Qwen2, vLLM's CPU build, the farm, the learner).

Before: a dead service turned every submission into a kgym error (`FarmEvaluator` answers a verdict
with `error`, never an exception), so steps went on committing with nothing scored, or a baseline
prefetch raised out of the job; a retry's actors were handed the dead service again.
Now: a step whose episodes end in kgym errors asks the service for a sign of life; a dead or wedged one
fails the step (`StepFailed`), and the retry starts a new service of the same config, streaming to the
same sink, before the new rollout actors take its handle. The step counts once.
"""

from __future__ import annotations

import pytest
from rljob_helpers import REPO

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(__import__("importlib").util.find_spec("vllm") is None,
                                 reason="vLLM is not installed (pip install -e '.[rollout]')")]


def test_a_dead_farm_service_fails_the_step_and_the_retry_starts_a_new_one(tiny, tmp_path, monkeypatch):
    import ray

    from jobs.rl import run_rl_job
    from jobs.rl_config import load_config
    from kgym.records.rl_records import RLRecords, Table, load, markers

    monkeypatch.setenv("KGYM_CACHE_DIR", "/tmp/kgym-rljob-cache")
    model, choices = tiny
    out = tmp_path / "out"
    cfg = load_config(REPO / "jobs" / "configs" / "rl_tiny.toml",
                      [f'model="{model}"', f'sampling.choice_file="{choices}"', f'records.out="{out}"',
                       'records.run_id="farm"', "eval.every=0", "steps=1"])
    lines: list[str] = []
    farms: list[str] = []

    def log(line: str) -> None:
        lines.append(line)
        print(line, flush=True)
        if ": farm service " in line:
            farms.append(line.split(": farm service ")[1].split()[0])
        if line.startswith("jobs.rl: step 1: rolling out") and len(farms) == 1 and "killed" not in lines:
            lines.append("killed")
            ray.kill(ray.get_actor(farms[0]), no_restart=True)  # before any episode submits

    summary = run_rl_job(cfg, log=log)
    run = out / "farm"
    text = "\n".join(lines[-40:])
    assert summary["steps"] == 1 and summary["restarts"] == 1, text
    assert any("starting a new farm service" in x for x in lines), text
    assert any(x.startswith("jobs.rl: a new farm service with 1 worker(s)") for x in lines), text
    attempts = {a["attempt"]: a for a in RLRecords(run).attempts()}
    assert [attempts[i]["outcome"] for i in (1, 2)] == ["retried", "done"], attempts
    assert "the farm service" in attempts[1]["reason"] and "kgym error" in attempts[1]["reason"], attempts[1]
    steps = load(run, Table.STEPS)
    assert list(steps["step"]) == [1] and list(steps["attempt"]) == [2] and sorted(markers(run)) == [1]
    # the step that counted was scored by the new service: its episodes carry no kgym error
    rows = load(run, Table.ROLLOUTS)
    assert len(rows) and rows["attempt"].eq(2).all() and rows["error"].isna().all(), rows[["attempt", "error"]]
