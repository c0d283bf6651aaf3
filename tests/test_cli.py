"""The `kgym verify` command: exit codes, one JSON object, clear errors naming the file."""

import json
import subprocess
import sys
from pathlib import Path

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
    assert [c["name"] for c in d["cases"]] == ["nominal", "x3", "x0.01", "negated", "abs"]
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
