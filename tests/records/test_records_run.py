"""A real local run: fixtures verified on the CPU, streamed to Parquet and metrics, then replayed by
`kgym.records.load`, `kgym replay` and the notebook; and `kgym verify --out --metrics-port`."""

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from kgym.contract import EvalRequest
from kgym.metrics import Metrics
from kgym.records import RecordWriter, load, verify_items
from kgym.reward import reward
from kgym.verify.parent.cases import CASES

from paths import fixture_path  # tests/fixtures/paths.py (tests/conftest.py puts it on sys.path)
from records_helpers import REPO

POLICY_REJECT = "import os\nclass ModelNew:\n    pass\n"


def _task(family, stage, seed):
    return {"task_id": f"{family}-v1", "family": family, "operation": family, "stage": stage, "seed": seed,
            "size": "tiny", "dtype": "float32", "shapes": {}, "answer_mode": "triton"}


@pytest.fixture(scope="module")
def small_run(verifier, tmp_path_factory):
    """Six real verifications over three families and two stages (one a generated kgym.tasks task),
    one with torch.compile timed, and one evaluation delivered twice (as a farm retry would)."""
    from kgym.tasks import make

    root = tmp_path_factory.mktemp("records")
    real = make("relu-v1", seed=3, size="tiny")  # a generated task: its spec, reference and solution
    spec = real.spec
    src = {(op, kind): fixture_path(op, kind).read_text() for op in ("relu", "softmax") for kind in
           ("reference", "good", "wrong")}
    items = [
        EvalRequest(_task("relu", "full", 0), src["relu", "reference"], src["relu", "good"], 0,
                    overrides={"measure_compile": True}),
        EvalRequest(_task("relu", "full", 0), src["relu", "reference"], src["relu", "wrong"], 0),
        EvalRequest(_task("softmax", "small", 1), src["softmax", "reference"], src["softmax", "good"], 1),
        EvalRequest(_task("softmax", "small", 1), src["softmax", "reference"], src["softmax", "wrong"], 1),
        EvalRequest(_task("softmax", "full", 2), src["softmax", "reference"], POLICY_REJECT, 2),
        EvalRequest(spec.to_dict(), real.reference, real.solution, spec.seed, overrides={"hybrid": real.hybrid}),
    ]
    metrics = Metrics()
    with RecordWriter(root, run_id="small", job_id="tests", flush_rows=2) as w:
        done = verify_items(items, verifier, writer=w, metrics=metrics)
    with RecordWriter(root, run_id="small", job_id="retry") as w:  # the first one, re-sent
        w.write(done[0].record)
    return root / "small", done, metrics


def test_each_verdict_is_one_row_with_real_fields(small_run):
    run_dir, done, metrics = small_run
    assert [d.verdict.gate for d in done] == [None, "correctness", None, "correctness", "policy", None]
    assert len(load(run_dir, deduplicate=False)) == 7
    df = load(run_dir)
    assert len(df) == 6 and df["evaluation_id"].is_unique
    assert list(df.sort_values("recorded_at")["evaluation_id"]) == [d.record["evaluation_id"] for d in done]
    relu = df[(df["family"] == "relu") & df["passed"]].iloc[0]
    assert relu["speedup_eager"] > 0 and relu["speedup_compile"] > 0 and relu["compile_ms"] > 0
    assert relu["cases_total"] == len(CASES) and relu["timing_clock"] == "host" and relu["verify_seconds"] > 0
    assert relu["torch_version"] and relu["worker_host"] and relu["device"] == "cpu"
    assert relu["reward"] == reward(done[0].verdict) and relu["verify_seed"] == 0
    assert [c["name"] for c in relu["cases"]] == [name for name, _ in CASES]
    reject = df[df["gate"] == "policy"].iloc[0]
    assert reject["cases_total"] == 0 and "os" in reject["reason"] and reject["reward"] == 0
    assert sorted(p.name for p in run_dir.iterdir()) == ["elementwise", "relu", "softmax"]
    generated = df[df["family"] == "elementwise"].iloc[0]
    assert generated["task_id"] == "relu-v1" and generated["size"] == "tiny" and generated["passed"]
    assert set(json.loads(generated["task_json"])) >= {"distribution", "spec_version", "shapes"}
    v = metrics.registry.get_sample_value
    assert v("kgym_evaluations_total", {"family": "softmax", "stage": "small", "gate": "correctness",
                                        "outcome": "failed"}) == 1
    assert v("kgym_solve_rate_ratio", {"family": "relu"}) == 0.5
    assert v("kgym_queue_depth", {"queue": "verify"}) == 0 and v("kgym_workers", {"state": "idle"}) == 1


def test_kgym_replay_prints_rates_gates_speedups_and_writes_plots(small_run, tmp_path: Path):
    run_dir, _, _ = small_run
    p = subprocess.run([sys.executable, "-m", "kgym.cli", "replay", str(run_dir), "--plots", str(tmp_path / "plots")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "evaluations: 6" in out
    import re

    lines = [" ".join(ln.split()) for ln in out.splitlines()]
    for expected in ("relu full 1/2 50.0%", "softmax small 1/2 50.0%", "softmax full 0/1 0.0%",
                     "elementwise full 1/1 100.0%", "correctness 2 (relu 1, softmax 1)", "policy 1 (softmax 1)"):
        assert expected in lines, (expected, out)
    assert any(re.fullmatch(r"relu vs eager n=1 \S+ / \S+ / \S+", ln) for ln in lines), out
    assert any(re.fullmatch(r"relu vs compile n=1 \S+ / \S+ / \S+", ln) for ln in lines), out
    for name in ("solve_rate.png", "gate_failures.png", "speedups.png"):
        assert (tmp_path / "plots" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    p = subprocess.run([sys.executable, "-m", "kgym.cli", "replay", str(tmp_path / "nothing")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "no records" in p.stderr


def test_notebook_runs_headless_on_the_run(small_run, tmp_path: Path):
    import nbformat
    from nbclient import NotebookClient

    run_dir, _, _ = small_run
    nb = nbformat.read(REPO / "notebooks" / "replay.ipynb", as_version=4)
    old = os.environ.get("KGYM_RUN_DIR")
    os.environ["KGYM_RUN_DIR"] = str(run_dir)  # the kernel inherits the environment
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
    assert len(images) >= 3  # solve rate, gate failures, speedups
    text = "".join(o.get("text", "") for o in outputs)
    assert "6 evaluations" in text and "families ['elementwise', 'relu', 'softmax']" in text


def test_kgym_verify_records_and_exports_metrics(tmp_path: Path):
    """The CLI path: one verdict to Parquet and to a live exporter; run twice, one evaluation id."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = [sys.executable, "-m", "kgym.cli", "verify", "--example", "relu", "--device", "cpu", "--runs", "3",
            "--json", "--out", str(tmp_path), "--run-id", "cli"]
    proc = subprocess.Popen(args + ["--metrics-port", str(port), "--metrics-addr", "127.0.0.1", "--metrics-hold", "20"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        body, deadline = "", time.monotonic() + 120
        while "kgym_evaluations_total{" not in body or ' 1.0' not in _passed_line(body):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else ""
            time.sleep(0.5)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    body = r.read().decode()
            except OSError:
                pass
        out = proc.stdout.readline()  # printed before the hold
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert 'family="custom"' in body and "kgym_verification_seconds_bucket" in body
    verdict = json.loads(out)  # stdout is still exactly one JSON object
    assert verdict["passed"] is True
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "recorded to" in p.stderr
    df = load(tmp_path / "cli", deduplicate=False)
    assert len(df) == 2 and df["evaluation_id"].nunique() == 1  # same task, candidate, seed, verifier
    row = load(tmp_path / "cli").iloc[0]
    assert row["family"] == "custom" and row["operation"] == "reference" and row["stage"] == "full"
    assert row["task_id"].startswith("custom-reference-") and row["outcome"] == "passed"


def _passed_line(body: str) -> str:
    return next((ln for ln in body.splitlines()
                 if ln.startswith("kgym_evaluations_total{") and 'outcome="passed"' in ln), "")
