"""`python -m jobs.eval` as users run it: an embedded Ray, one CPU verifier worker, the fake checkout;
records and the scores JSON come out, and re-running the same run id verifies nothing again.
The job runs in its own process group, which the test ends (never `ray stop`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kb_fake import answer, make_checkout, triton_affine

pytest.importorskip("ray")
pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def _run(args: list[str]) -> subprocess.CompletedProcess:
    proc = subprocess.Popen([sys.executable, "-m", "jobs.eval", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=300)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the embedded Ray's agents may outlive the driver
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "")


def test_eval_job_records_scores_and_resumes(tmp_path):
    kb = make_checkout(tmp_path / "kb")
    gens = [{"level": 1, "problem_id": 1, "model": "m", "answer": answer(triton_affine(3.0, 0.0))},
            {"level": 1, "problem_id": 2, "model": "m", "answer": "no code here"}]
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gens))
    args = ["--kernelbench", str(kb), "--generations", str(tmp_path / "g.jsonl"), "--out", str(tmp_path / "out"),
            "--run-id", "r1", "--workers", "1", "--num-cpus", "2", "--timed-runs", "2"]
    first = _run(args)
    assert first.returncode == 0, first.stdout[-3000:]
    scores = json.loads((tmp_path / "out" / "r1.scores.json").read_text())
    row = scores["models"]["m"]["levels"]["1"]
    assert (row["n"], row["compiled"], row["correct"]) == (2, 1, 1)
    again = _run(args)
    assert again.returncode == 0, again.stdout[-3000:]
    assert "0 verified, 1 already recorded" in again.stdout
    assert json.loads((tmp_path / "out" / "r1.scores.json").read_text())["models"] == scores["models"]


def test_eval_job_bad_input(tmp_path):
    r = _run(["--kernelbench", str(tmp_path / "none"), "--generations", str(tmp_path / "g.jsonl")])
    assert r.returncode == 2 and "error" in r.stdout
