"""The `kgym verify` command: exit codes, one JSON object, clear errors naming the file."""

import json
import subprocess
import sys
from pathlib import Path

from kgym.verify.parent.cases import CASES

from paths import FIXTURES, fixture_path


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kgym.cli", *args], capture_output=True, text=True, timeout=300)


def test_json_is_exactly_one_object_with_the_documented_keys():
    p = run("verify", "--example", "relu", "--device", "cpu", "--runs", "3", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)  # the whole stdout is one object
    for key in ("passed", "gate", "reason", "cases", "timings", "speedup_eager", "speedup_compile", "flagged",
                "reward", "error"):
        assert key in d
    assert d["passed"] is True and d["gate"] is None and d["error"] is None
    assert [c["name"] for c in d["cases"]] == [name for name, _ in CASES]
    assert set(d["timings"]) >= {"candidate", "eager", "compile"}
    assert d["timings"]["candidate"]["median_ms"] > 0


def test_failing_verdict_exits_zero_and_report_shows_gates():
    p = run("verify", "--reference", str(fixture_path("relu", "reference")),
            "--candidate", str(FIXTURES / "relu/wrong.py"), "--device", "cpu", "--runs", "3")
    assert p.returncode == 0, p.stderr
    assert "correctness  FAIL" in p.stdout and "timing       not run" in p.stdout
    assert "reward" in p.stdout


def test_missing_and_empty_files_exit_2_naming_the_file(tmp_path: Path):
    p = run("verify", "--reference", "does/not/exist.py", "--candidate", str(fixture_path("relu", "good")))
    assert p.returncode == 2 and "does/not/exist.py" in p.stderr and "does not exist" in p.stderr
    empty = tmp_path / "empty.py"
    empty.write_text("")
    p = run("verify", "--reference", str(fixture_path("relu", "reference")), "--candidate", str(empty))
    assert p.returncode == 2 and "empty.py" in p.stderr and "empty" in p.stderr


def test_bad_reference_exits_2_with_what_to_do(tmp_path: Path):
    bad = tmp_path / "ref.py"
    bad.write_text("import torch\nclass Model(torch.nn.Module):\n    pass\n")
    p = run("verify", "--reference", str(bad), "--candidate", str(fixture_path("relu", "good")), "--device", "cpu")
    assert p.returncode == 2 and "ref.py" in p.stderr and "get_inputs" in p.stderr
    bad.write_text("def f(:\n")
    p = run("verify", "--reference", str(bad), "--candidate", str(fixture_path("relu", "good")), "--device", "cpu")
    assert p.returncode == 2 and "syntax error" in p.stderr


def test_bad_usage_exits_2():
    assert run("verify", "--baseline", "fastest").returncode == 2
    assert run("verify", "--example", "nope").returncode == 2
    assert run("verify").returncode == 2
    p = run("verify", "--example", "relu", "--device", "tpu")
    assert p.returncode == 2 and "tpu" in p.stderr


REFERENCE_BODY = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale=1.0):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.relu(x) * self.scale


"""


def _reference(inputs: str, init: str) -> str:
    """REFERENCE_BODY with get_inputs() and get_init_inputs() returning (or raising) the given lines."""
    return REFERENCE_BODY + f"def get_inputs():\n    {inputs}\n\n\ndef get_init_inputs():\n    {init}\n"


def test_reference_whose_get_inputs_raises_exits_2_naming_the_file(tmp_path: Path):
    ref = tmp_path / "ref_raises.py"
    ref.write_text(_reference("raise RuntimeError('no inputs today')", "return []"))  # the raise is line 15
    p = run("verify", "--reference", str(ref), "--candidate", str(fixture_path("relu", "good")), "--device", "cpu")
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "ref_raises.py" in p.stderr and "get_inputs() raised RuntimeError: no inputs today (line 15)" in p.stderr
    assert "Traceback" not in p.stderr and "kgym-ref-" not in p.stderr  # no temp copy, no kgym traceback
    assert p.stdout == ""


def test_check_reference_names_the_call_that_raised(tmp_path: Path):
    import pytest

    from kgym.cli import UsageError, check_reference
    from kgym.verify.parent.reference import load_reference

    bad_init = _reference("return [torch.randn(4)]", "return [1 / 0]")
    with pytest.raises(UsageError, match=r"'init\.py': get_init_inputs\(\) raised ZeroDivisionError"):
        check_reference(load_reference(bad_init, origin="init.py"), "init.py")
    bad_model = _reference("return [torch.randn(4)]", "return [1, 2]")
    with pytest.raises(UsageError, match=r"Model\(\*get_init_inputs\(\)\) raised TypeError"):
        check_reference(load_reference(bad_model, origin="model.py"), "model.py")
    # a get_inputs that computes on its data fails on the meta device; it runs on the CPU and passes
    data = _reference("x = torch.randn(8)\n    return [x[x > 0].clone() if (x > 0).any() else x]", "return [2.0]")
    check_reference(load_reference(data, origin="data.py"), "data.py")
    # a full-size reference is checked without allocating its inputs (meta tensors)
    big = _reference("return [torch.randn(4096, 393216)]", "return []")
    check_reference(load_reference(big, origin="big.py"), "big.py")


def _isolation_verdict():
    from kgym.contract import Verdict

    v = Verdict(device="cpu", launches=0, stages_s={"load": 0.01})
    return v.fail("isolation", "PyTorch computed in forward(): aten::relu")


def test_report_does_not_pass_the_launch_gate_of_a_pure_torch_candidate():
    from kgym.cli import format_report, gate_statuses

    statuses = {g: s for g, s, _ in gate_statuses(_isolation_verdict())}
    assert statuses == {"policy": "pass", "compile": "pass", "launch": "unknown", "isolation": "FAIL",
                        "correctness": "not run", "timing": "not run"}
    report = format_report(_isolation_verdict(), "torch.py against ref.py")
    assert "0 Triton launch(es)" not in report and "launch       pass" not in report
    assert "no PyTorch compute seen" not in report  # the detail of a passed isolation gate


def test_report_of_a_timed_run_failure_keeps_the_cases_that_passed():
    from kgym.cli import gate_statuses
    from kgym.contract import CaseResult, Timing, Verdict

    v = Verdict(device="cpu", launches=2, stages_s={"load": 0.01},
                cases=[CaseResult(n, True, 0.0, 0.0, True, "candidate_first") for n in ("nominal", "x3", "x0.01")],
                timings={"candidate": Timing(1.0, 0.01, 10, True, "host")},
                ).fail("isolation", "timed runs: the output of timed run 7 is wrong for its inputs")
    statuses = {g: (s, d) for g, s, d in gate_statuses(v)}
    assert statuses["launch"] == ("pass", "2 Triton launch(es) in the first forward")
    assert statuses["isolation"] == ("FAIL", "in the timed runs, after every hidden case passed")
    assert statuses["correctness"] == ("pass", "3/3 hidden cases")
    assert statuses["timing"][0] == "stopped"


def test_pure_torch_candidate_report_end_to_end(tmp_path: Path):
    cand = tmp_path / "torch_only.py"
    cand.write_text("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                    "    def forward(self, x):\n        return torch.relu(x)\n")
    p = run("verify", "--reference", str(fixture_path("relu", "reference")), "--candidate", str(cand),
            "--device", "cpu", "--runs", "3")
    assert p.returncode == 0, p.stderr
    assert "isolation    FAIL" in p.stdout and "launch       unknown" in p.stdout, p.stdout
    assert "0 Triton launch(es)" not in p.stdout
