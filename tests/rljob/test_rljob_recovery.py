"""The RL job recovers from failed steps, on the CPU with every part real (a tiny random Qwen2, vLLM's
CPU build, the farm, the learner): an actor that dies, or a call that does not answer in time, fails
the step; the step is retried from the last checkpoint with fresh actors; after `[recovery]
max_retries` failures in a row the job ends (exit 1, one line) with the reason in its attempt record.

On main 4b45def only `RayActorError` was caught (and never run), no `ray.get` had a timeout (a wedged
engine hung the run) and the task actor was never restarted.

1. One run of 2 steps: the rollout actor is killed while step 1 rolls out, the learner while step 2
   runs. Both steps count once; three attempts, the first two ended "retried" with the reason.
2. The same run id resumed for step 3, whose learner step cannot answer within `learner_timeout_s`
   (set far below a step's time): wedged; with `max_retries = 0` the job gives up at once, exit 1 and
   one line, the reason in the last attempt's record, steps 1-2 untouched. (Retries before giving up
   are part 1: the count of failures in a row is the same loop.)
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from rljob_helpers import REPO

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(__import__("importlib").util.find_spec("vllm") is None,
                                 reason="vLLM is not installed (pip install -e '.[rollout]')")]


def _sets(model: Path, choices: Path, out: Path, run_id: str, *extra: str) -> list[str]:
    return [f'model="{model}"', f'sampling.choice_file="{choices}"', f'records.out="{out}"',
            f'records.run_id="{run_id}"', "eval.every=0", *extra]


def _kill_named(name: str, delay: float) -> None:
    import ray

    def later():
        time.sleep(delay)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                ray.kill(ray.get_actor(name))
                return
            except ValueError:  # not registered yet
                time.sleep(0.2)

    threading.Thread(target=later, daemon=True).start()


def test_dead_actors_are_replaced_and_a_wedged_learner_ends_the_job(tiny, tmp_path, monkeypatch, capsys):
    from jobs.rl import run_rl_job
    from jobs.rl_config import load_config
    from kgym.records.rl_records import RLRecords, Table, load, markers

    monkeypatch.setenv("KGYM_CACHE_DIR", "/tmp/kgym-rljob-cache")
    model, choices = tiny
    out = tmp_path / "out"
    cfg = load_config(REPO / "jobs" / "configs" / "rl_tiny.toml", _sets(model, choices, out, "rec", "steps=2"))
    lines: list[str] = []

    def log(line: str) -> None:
        lines.append(line)
        print(line, flush=True)
        if line.startswith("jobs.rl: step 1: rolling out") and "a1" not in killed:
            killed.add("a1")
            _kill_named("kgym-rl-rec-a1-rollout-0", 1.0)
        if line.startswith("jobs.rl: step 2: rolling out") and "a2" not in killed:
            killed.add("a2")
            _kill_named("kgym-rl-rec-a2-learner", 0.5)

    killed: set[str] = set()
    summary = run_rl_job(cfg, log=log)
    run = out / "rec"
    assert summary["steps"] == 2 and summary["restarts"] == 2, "\n".join(lines[-30:])
    steps = load(run, Table.STEPS)
    assert list(steps["step"]) == [1, 2] and list(steps["attempt"]) == [2, 3]
    # the step split: engine calls and their batch size; a CPU run never sleeps the engine
    assert (steps["generate_calls"] >= 1).all() and (steps["mean_batch"] >= 1).all()
    assert (steps["sleep_s"] == 0).all() and (steps["wake_s"] == 0).all()
    assert sorted(markers(run)) == [1, 2]
    attempts = {a["attempt"]: a for a in RLRecords(run).attempts()}
    assert [attempts[i]["outcome"] for i in (1, 2, 3)] == ["retried", "retried", "done"]
    assert "step 1 failed" in attempts[1]["reason"] and "rolling out" in attempts[1]["reason"]
    assert "step 2 failed" in attempts[2]["reason"] and "died" in attempts[2]["reason"]
    assert any("retry 1/" in x for x in lines)


    # 2. The same run resumed for a third step whose learner cannot answer within its deadline: with no
    # retry left the job gives up (exit 1, one line), the reason in the attempt record, steps 1-2 kept.
    from jobs.rl import main

    argv = ["--config", str(REPO / "jobs" / "configs" / "rl_tiny.toml")]
    for item in _sets(model, choices, out, "rec", "steps=3", "recovery.learner_timeout_s=0.001",
                      "recovery.max_retries=0"):
        argv += ["--set", item]
    capsys.readouterr()
    assert main(argv) == 1
    err = capsys.readouterr().err
    errors = [x for x in err.splitlines() if x.startswith("jobs.rl: error:")]
    assert len(errors) == 1 and "learner step 3" in errors[0] and "wedged" in errors[0], err[-3000:]
    assert not [x for x in err.splitlines() if x.startswith("Traceback")], err[-3000:]
    last = max(RLRecords(run).attempts(), key=lambda a: a["attempt"])
    assert last["attempt"] == 4 and last["outcome"] == "failed"
    assert "wedged" in last["reason"] and "after 0 retries" in last["reason"]
    assert sorted(markers(run)) == [1, 2] and list(load(run, Table.STEPS)["step"]) == [1, 2]
