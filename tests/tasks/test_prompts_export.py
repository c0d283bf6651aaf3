"""Prompts (single-turn and repair), decontamination against a KernelBench-shaped checkout, export."""

from __future__ import annotations

import hashlib

import pyarrow.parquet as pq
import pytest

from kgym.cli import main
from kgym.tasks import TaskError, make, operations
from kgym.tasks.decontaminate import Decontaminator, jaccard, tokens
from kgym.tasks.export import export_tasks
from kgym.tasks.prompts import TOOLS


def test_single_turn_prompt_has_reference_example_and_rules():
    t = make("relu-v1", 4, size="full")
    p = t.prompt()
    assert t.reference.strip() in p
    assert "mean_of_two_kernel" in p  # the worked example
    assert "ModelNew" in p and "```python" in p
    assert "tl.maximum" not in p  # the answer is not given away


def test_hybrid_prompt_allows_one_library_call():
    assert "exactly one library call" not in make("relu-v1", 0).prompt()
    hybrid = [(tid, s) for tid, op in operations().items() for s in op.stages if op.hybrid or s == "epilogue"]
    if not hybrid:
        pytest.skip("no hybrid task registered yet")
    tid, stage = hybrid[0]
    p = make(tid, 0, stage=stage).prompt()
    assert "exactly one library call" in p and "PyTorch may only allocate" not in p


def test_repair_messages_and_tools_are_openai_shaped():
    msgs = make("sigmoid-v1", 2, size="tiny").repair_messages()
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "submit_kernel" in msgs[0]["content"] and "at most 4" in msgs[0]["content"]
    names = [t["function"]["name"] for t in TOOLS]
    assert names == ["submit_kernel", "inspect_evaluation", "finalize"]
    for tool in TOOLS:
        assert tool["type"] == "function"
        params = tool["function"]["parameters"]
        assert params["type"] == "object" and set(params["required"]) <= set(params["properties"])


def _fake_kernelbench(root, relu_like: str):
    lvl = root / "KernelBench" / "level1"
    lvl.mkdir(parents=True)
    (lvl / "1_relu_like.py").write_text(relu_like)
    (lvl / "2_unrelated.py").write_text("import torch\nclass Model:\n    def forward(self, q, k, v):\n"
                                        "        return torch.einsum('bhd,bkd->bhk', q, k).softmax(-1) @ v\n")


def test_decontamination_rejects_near_copies(tmp_path):
    task = make("relu-v1", 1, size="full")
    _fake_kernelbench(tmp_path, task.reference.replace("Applies ReLU", "ReLU on"))
    d = Decontaminator(tmp_path)
    o = d.check(task)
    assert o.rejected and o.problem.endswith("1_relu_like.py") and o.score > 0.6
    other = d.check(make("kernelbook-v1", 1))
    assert not other.rejected and other.score < o.score
    assert d.rejected_ids([task]) == ["relu-v1"]
    assert jaccard(tokens("a b c"), tokens("a b d")) == 0.5


def test_decontamination_errors(tmp_path):
    with pytest.raises(TaskError, match="not a directory"):
        Decontaminator(tmp_path / "missing")
    with pytest.raises(TaskError, match="no level"):
        Decontaminator(tmp_path)


def test_export_is_deterministic_and_has_a_family_column(tmp_path):
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    assert export_tasks(12, a, seed=3) == 12
    export_tasks(12, b, seed=3)
    assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()
    df = pq.read_table(a).to_pandas()
    assert len(df) == 12 and {"family", "task_id", "stage", "reference", "prompt", "spec"} <= set(df.columns)
    assert not list(tmp_path.glob(".*tmp*"))


def test_cli_tasks(tmp_path, capsys):
    assert main(["tasks", "list"]) == 0
    assert "relu-v1" in capsys.readouterr().out
    assert main(["tasks", "show", "relu-v1", "--seed", "3", "--what", "reference"]) == 0
    assert "class Model" in capsys.readouterr().out
    assert main(["tasks", "show", "relu", "--seed", "3"]) == 2
    assert "did you mean 'relu-v1'" in capsys.readouterr().err
    assert main(["tasks", "show", "relu-v1", "--seed", "-3"]) == 2
    out = tmp_path / "t.parquet"
    assert main(["tasks", "export", "--n", "5", "--seed", "1", "--size", "tiny", "--out", str(out)]) == 0
    assert pq.read_table(out).num_rows == 5
    assert main(["tasks", "export", "--n", "0", "--out", str(out)]) == 2


def test_task_reference_runs_through_kgym_verify_unchanged(tmp_path, capsys):
    import json

    task = make("leaky_relu-v1", 21, size="tiny")
    ref, sol = tmp_path / "reference.py", tmp_path / "solution.py"
    ref.write_text(task.reference)
    sol.write_text(task.solution)
    rc = main(["verify", "--reference", str(ref), "--candidate", str(sol), "--device", "cpu",
               "--seed", str(task.spec.seed), "--runs", "3", "--json"])
    verdict = json.loads(capsys.readouterr().out)
    assert rc == 0 and verdict["passed"], verdict["reason"]
