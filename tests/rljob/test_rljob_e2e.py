"""The RL job end to end on the CPU, as users run it: a tiny random Qwen2 with a tokenizer trained
here, vLLM's CPU build, the Triton interpreter, the real farm (Ray, one verifier worker) and the real
learner (fp32, no quantisation). Its turns are constrained to scripted answers (relu's solution, its
known-wrong answer, as a python fence or a submit_kernel call, or no code) so they reach the verifier.

1. `python -m jobs.rl` (2 steps, a held-out evaluation before step 1 and at step 2) runs as a
   subprocess and is SIGKILLed right after step 1's done marker is written (its process group: the
   embedded Ray dies too); then it runs again with the same run id and finishes step 2. Checked: each
   step counted once, in the steps table and in the rollouts (rows of no other step), the learner's
   checkpoint at step 2 with policy version 2, the second launch resumed from step 1's checkpoint
   (attempt 2) and redid nothing, its held-out evaluation at step 2 compared with the one before step
   1 (restored from that checkpoint), and the farm's evaluation rows exist for the episodes'
   submissions. Two steps are enough: one committed before the kill, one after the resume (a third,
   as this test ran until 2026-12-07, repeated a step on either side and cost a training step).
2. The same with `[offpolicy] overlap = true` (3 steps, no evaluation): step s+1's rollout runs on the
   real async rollout actor while step s's learner steps; killed right after step 2's marker (step 3's
   rollout in flight) and resumed. Checked: step 2 trained on samples one version behind the learner
   (staleness 1, none dropped), its rollout overlapped step 1's learner step (the log line's figure),
   every turn of a step's first round has the version it was sent under, and the resumed run redid
   step 3 alone, on the restored version.
3. `ray job submit -- python -m jobs.rl` against a `ray start --head` on loopback (token auth), one
   step, records found where KGYM_SUBMIT_DIR says.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from rljob_helpers import REPO

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(__import__("importlib").util.find_spec("vllm") is None,
                                 reason="vLLM is not installed (pip install -e '.[rollout]')")]


def _cmd(model: Path, choices: Path, out: Path, run_id: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "jobs.rl", "--config", "jobs/configs/rl_tiny.toml", "--set", f'model="{model}"',
            "--set", f'sampling.choice_file="{choices}"', "--set", f'records.out="{out}"', "--run-id", run_id, *extra]


def _env() -> dict[str, str]:
    # Ray waits 30 s for its raylet by default; on a loaded 2-core machine that start took longer.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "RAY_raylet_start_wait_time_s": "180",
           "KGYM_CACHE_DIR": os.environ.get("KGYM_TEST_CACHE", "/tmp/kgym-rljob-cache")}
    env.pop("RAY_ADDRESS", None)
    return env


def _kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def test_killed_after_step_1_resumes_and_finishes(tiny, tmp_path):
    from kgym.records import load as load_evaluations
    from kgym.records.rl_records import Table, load, markers, read_raw

    model, choices = tiny
    out = tmp_path / "out"
    cmd = _cmd(model, choices, out, "e2e", "--set", "steps=2", "--set", "eval.at_start=true")
    run = out / "e2e"
    first = subprocess.Popen(cmd, cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
    log = []
    try:
        for line in first.stdout:
            log.append(line)
            if line.startswith("jobs.rl: step 1/2"):  # printed after step 1's marker is written
                _kill_group(first.pid)
                break
        first.wait(timeout=60)
    finally:
        _kill_group(first.pid)
    assert first.returncode == -signal.SIGKILL, "".join(log[-40:])
    assert sorted(markers(run)) == [0, 1]  # 0: the evaluation before step 1

    second = subprocess.run(cmd, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=900,
                            start_new_session=True)
    assert second.returncode == 0, second.stdout[-4000:] + second.stderr[-4000:]
    assert "resuming after step 1" in second.stdout and "step 1/2" not in second.stdout
    assert "step 2/2" in second.stdout and "evaluation of the starting policy" not in second.stdout

    steps = load(run, Table.STEPS)
    assert list(steps["step"]) == [1, 2] and list(steps["attempt"]) == [1, 2]
    assert list(steps["version_after"]) == [1, 2] and list(steps["learner_step"]) == [1, 2]
    assert len(read_raw(run, Table.STEPS)) == 2  # nothing was redone
    rollouts = load(run, Table.ROLLOUTS)
    train = rollouts[rollouts["kind"] == "train"]
    assert set(train["step"]) == {1, 2} and train["episode_id"].is_unique
    assert (train.groupby("step")["group_id"].nunique() >= 1).all()
    assert train.loc[train["trained"], "samples"].sum() == steps["samples_trained"].sum()
    assert train["prompt_ids"].notna().all() and train["transcript_json"].str.len().gt(10).all()
    evals = load(run, Table.EVALS).sort_values("step")
    assert list(evals["step"]) == [0, 2] and list(evals["attempt"]) == [1, 2]
    assert (rollouts["kind"] == "eval").sum() == 2 * 2 * 2  # two evaluations of 2 tasks x 2 samples
    # the resumed run compared its evaluation with the first launch's, kept in step 1's checkpoint
    assert evals["previous_step"].iloc[1] == 0 and evals["delta_pp"].notna().iloc[1]
    ckpt = json.loads((out / "e2e.checkpoints" / "step-000002" / "state.json").read_text())
    assert ckpt["policy_version"] == 2 and ckpt["attempt"] == 2
    assert (out / "e2e.checkpoints" / "step-000002" / "learner" / ckpt["learner_checkpoint"] / "adapter").is_dir()
    farm = load_evaluations(run)  # the farm's own rows: every verified submission
    ids = {i for ids in train["evaluation_ids"] for i in ids}
    assert ids and ids <= set(farm["evaluation_id"])


def test_overlapped_run_trains_one_version_behind_and_resumes(tiny, tmp_path):
    import re

    from kgym.records.rl_records import Table, load, read_raw

    model, choices = tiny
    out = tmp_path / "out"
    # no resampling: a group's first round is what the step trains on (a resampled round runs after the
    # sync, on the learner's version)
    cmd = _cmd(model, choices, out, "overlap", "--set", "steps=3", "--set", "eval.every=0",
               "--set", "offpolicy.overlap=true", "--set", "resample.max_rounds=0")
    run = out / "overlap"
    first = subprocess.Popen(cmd, cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
    log = []
    try:
        for line in first.stdout:
            log.append(line)
            if line.startswith("jobs.rl: step 2/3"):  # step 3's rollout was sent before step 2's learner step
                _kill_group(first.pid)
                break
        first.wait(timeout=60)
    finally:
        _kill_group(first.pid)
    text = "".join(log)
    assert first.returncode == -signal.SIGKILL, text[-4000:]
    assert "overlap = true: step s+1's rollout is generated while" in text
    assert re.search(r"step 3: rolling out 1 group\(s\) on v1 beside step 2's learner step", text), text[-3000:]
    step2 = next(x for x in log if x.startswith("jobs.rl: step 2/3"))
    assert "v1->v2" in step2 and "of v0 (staleness 1)" in step2, step2
    assert float(re.search(r"overlap ([0-9.]+)s", step2).group(1)) > 0, step2

    second = subprocess.run(cmd, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=900,
                            start_new_session=True)
    assert second.returncode == 0, second.stdout[-4000:] + second.stderr[-4000:]
    assert "resuming after step 2" in second.stdout and "step 2/3" not in second.stdout

    steps = load(run, Table.STEPS)
    assert list(steps["step"]) == [1, 2, 3] and list(steps["attempt"]) == [1, 1, 2]
    assert len(read_raw(run, Table.STEPS)) == 3  # nothing doubled: the killed in-flight rollout left no row
    assert list(steps["version_after"]) == [1, 2, 3]
    assert list(steps["version_before"]) == [0, 0, 2]  # the versions that generated each step's first round
    assert list(steps["staleness_max"]) == [0, 1, 0] and (steps["dropped_stale"] == 0).all()
    assert (steps["samples_trained"] > 0).all()
    train = load(run, Table.ROLLOUTS)
    train = train[train["kind"] == "train"]
    two = train[train["step"] == 2]
    assert two["trained"].all() and set(two["learner_version"]) == {1}
    first_round = two[two["resample_round"] == 0]
    assert first_round["policy_versions"].map(lambda vs: set(vs) == {0}).all()  # no turn switched mid-rollout
    assert train.loc[train["trained"], "samples"].sum() == steps["samples_trained"].sum()


def test_ray_job_submit_to_a_local_head(tiny, tmp_path):
    from farm_test_ports import free_ports

    from kgym.records.rl_records import Table, load

    from ray_submit import submit_when_agent_is_up

    model, choices = tiny
    gcs, dash, client, agent_http, agent_grpc, env_agent, metrics, nm, om = free_ports(9)
    temp = tempfile.mkdtemp(prefix="kgr-")
    env = {**_env(), "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    head = subprocess.Popen(
        ["ray", "start", "--head", "--block", f"--port={gcs}", "--num-cpus=4", "--num-gpus=0",
         "--include-dashboard=true", "--dashboard-host=127.0.0.1", f"--dashboard-port={dash}",
         f"--ray-client-server-port={client}", f"--dashboard-agent-listen-port={agent_http}",
         f"--dashboard-agent-grpc-port={agent_grpc}", f"--runtime-env-agent-port={env_agent}",
         f"--metrics-export-port={metrics}", f"--node-manager-port={nm}", f"--object-manager-port={om}",
         f"--object-store-memory={200 * 2**20}", f"--temp-dir={temp}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    address = f"http://127.0.0.1:{dash}"
    try:
        deadline = time.monotonic() + 180
        while subprocess.run(["ray", "job", "list", "--address", address], env=env, capture_output=True,
                             timeout=60).returncode != 0:
            assert head.poll() is None and time.monotonic() < deadline, "the head did not come up"
            time.sleep(3)
        sub_id = f"kgym-rl-{secrets.token_hex(4)}"
        job = _cmd(model, choices, Path("out"), "submitted", "--set", "steps=1", "--set", "eval.every=0",
                   "--set", 'ray.address="auto"')
        job[0] = "python"
        done = submit_when_agent_is_up(["ray", "job", "submit", "--address", address, "--submission-id", sub_id,
                                        "--working-dir", str(REPO), "--runtime-env-json",
                                        json.dumps({"env_vars": {"KGYM_SUBMIT_DIR": str(tmp_path)}}), "--", *job],
                                       env)
        status = subprocess.run(["ray", "job", "status", "--address", address, sub_id], env=env,
                                capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "succeeded" in status.stdout + status.stderr, \
            done.stdout[-4000:] + done.stderr[-3000:]
        run = tmp_path / "out" / "submitted"
        assert f"records in {run}" in done.stdout
        assert list(load(run, Table.STEPS)["step"]) == [1]
    finally:
        _kill_group(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        _kill_group(head.pid)
