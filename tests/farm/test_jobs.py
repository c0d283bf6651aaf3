"""jobs.verify end to end, as users run it: a driver SIGKILLed mid-batch and restarted resumes without
losing or duplicating a recorded row; and `ray job submit --working-dir .` against a `ray start --head`
on loopback (Ray 2.60 token auth, non-default ports): a relative records path is refused (exit 2, the
message says why and how), and with the submitting directory passed as KGYM_SUBMIT_DIR the job runs
to SUCCEEDED, prints the absolute location and its records are found at the path it was given.

Each test starts its own Ray in a child process and ends only processes it started (their process
group), never `ray stop`, which would stop every Ray on a shared machine.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from farm_helpers import REPO, kill_once_durable, rows, write_config, write_input
from ray_submit import submit_when_agent_is_up

pytest.importorskip("ray")
pytestmark = pytest.mark.slow


def _kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def test_killed_driver_restarts_and_resumes(tmp_path):
    ids = write_input(tmp_path / "in.jsonl", range(10, 25))  # 30 rows
    write_config(tmp_path / "job.toml", tmp_path / "in.jsonl", tmp_path / "out", "resume", flush_rows=1)
    cmd = [sys.executable, "-m", "jobs.verify", "--config", str(tmp_path / "job.toml")]
    run = tmp_path / "out" / "resume"
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        kill_once_durable(proc, run)  # mid-batch: the first rows are durable, most are still to come
        proc.wait(timeout=60)
    finally:
        _kill_group(proc.pid)  # the embedded Ray's agents outlive a SIGKILLed driver
    assert proc.returncode == -signal.SIGKILL, "the job finished before it could be killed"
    # A Ray worker outside the driver's process group (the record sink) can flush its last buffered
    # row a moment after the kill: read what was recorded once it stops changing.
    before, deadline = rows(run), time.monotonic() + 20
    while time.monotonic() < deadline:
        time.sleep(3.0)
        now = rows(run)
        if len(now) == len(before):
            break
        before = now
    assert len(before) >= 1 and before["evaluation_id"].is_unique
    assert len(before) < len(ids)

    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=900, start_new_session=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"{len(before)} already recorded" in done.stdout, done.stdout[-2000:]
    after = rows(run)
    assert sorted(after["evaluation_id"]) == sorted(ids)  # every id once: nothing lost, nothing twice
    kept = after.set_index("evaluation_id").loc[before["evaluation_id"], "recorded_at"]
    assert list(kept) == list(before["recorded_at"])  # the rows recorded before the kill are untouched
    assert set(after["outcome"]) == {"passed", "failed"}


def _free_ports(n: int) -> list[int]:
    socks, ports = [], []
    while len(ports) < n:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        if not 10002 <= port <= 19999:  # Ray reserves that range for its workers (and metrics export)
            ports.append(port)
        socks.append(s)
    for s in socks:
        s.close()
    return ports


def test_ray_job_submit_to_a_local_head(tmp_path):
    ids = write_input(tmp_path / "in.jsonl", range(20, 22))
    # A relative records path, as a new user writes it: relative to the directory they submit from.
    write_config(tmp_path / "job.toml", tmp_path / "in.jsonl", "out", "submitted", address=None, num_cpus=None)
    gcs, dash, client, agent_http, agent_grpc, env_agent, metrics, nm, om = _free_ports(9)
    temp = tempfile.mkdtemp(prefix="kgr-")  # short: Ray's unix sockets live under it
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    env.pop("RAY_ADDRESS", None)
    head = subprocess.Popen(
        ["ray", "start", "--head", "--block", f"--port={gcs}", "--num-cpus=2", "--num-gpus=0",
         "--include-dashboard=true", "--dashboard-host=127.0.0.1", f"--dashboard-port={dash}",
         f"--ray-client-server-port={client}", f"--dashboard-agent-listen-port={agent_http}",
         f"--dashboard-agent-grpc-port={agent_grpc}", f"--runtime-env-agent-port={env_agent}",
         f"--metrics-export-port={metrics}", f"--node-manager-port={nm}", f"--object-manager-port={om}",
         f"--object-store-memory={200 * 2**20}", f"--temp-dir={temp}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    address = f"http://127.0.0.1:{dash}"
    try:
        deadline = time.monotonic() + 180
        while True:  # the Jobs API answers once the dashboard is up
            probe = subprocess.run(["ray", "job", "list", "--address", address], env=env, capture_output=True,
                                   text=True, timeout=60)
            if probe.returncode == 0:
                break
            assert head.poll() is None, "ray start --head exited"
            assert time.monotonic() < deadline, probe.stderr[-2000:]
            time.sleep(3)

        def submit(*extra: str) -> tuple[subprocess.CompletedProcess, str, str]:
            sub_id = f"kgym-test-{secrets.token_hex(4)}"
            done = submit_when_agent_is_up(
                ["ray", "job", "submit", "--address", address, "--submission-id", sub_id, "--working-dir", str(REPO),
                 *extra, "--", "python", "-m", "jobs.verify", "--config", str(tmp_path / "job.toml")], env)
            status = subprocess.run(["ray", "job", "status", "--address", address, sub_id], env=env,
                                    capture_output=True, text=True, timeout=60)
            return done, status.stdout + status.stderr, sub_id

        refused, status, sub_id = submit()  # no submitting directory: the relative path would land in Ray's copy
        assert f"Job '{sub_id}' failed" in status and "relative path" in refused.stdout + refused.stderr, \
            refused.stdout[-3000:] + refused.stderr[-3000:] + status
        assert not (tmp_path / "out").exists()
        done, status, sub_id = submit("--runtime-env-json",
                                      json.dumps({"env_vars": {"KGYM_SUBMIT_DIR": str(tmp_path)}}))
        assert done.returncode == 0 and f"Job '{sub_id}' succeeded" in status, \
            done.stdout[-3000:] + done.stderr[-3000:] + status
        run = tmp_path / "out" / "submitted"
        assert f"records in {run}" in done.stdout  # the absolute location, printed by the job
        recorded = rows(run)
        assert sorted(recorded["evaluation_id"]) == sorted(ids)
    finally:
        _kill_group(head.pid, signal.SIGTERM)  # ray start --block stops what it started
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        _kill_group(head.pid)
    assert _wait_gone(temp), "Ray processes of the test's head are still running"


def _wait_gone(temp: str, timeout_s: float = 30.0) -> bool:
    """True once no process mentions the head's temp dir on its command line (Linux /proc)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        alive = []
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    if temp.encode() in (d / "cmdline").read_bytes():
                        alive.append(d.name)
                except OSError:
                    pass
        if not alive:
            return True
        time.sleep(1)
    return False
