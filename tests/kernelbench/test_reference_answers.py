"""kgym's own KernelBench level-1 answers (benchmarks/kernelbench_level1/) are well formed, without
KernelBench: every file is named `<id>_<Name>.py`, parses, defines `ModelNew` with a Triton kernel,
passes the verifier's static policy, and `benchmarks/kernelbench_answers.py` turns the folder into a
generations JSONL that `read_generations` accepts and whose code `extract_code` gets back unchanged.
Running the answers against the problems is the job's work (`jobs.eval`), not this file's."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

from kgym.answers import extract_code
from kgym.kernelbench.generations import read_generations
from kgym.kernelbench.hybrid import keeps_torch_op
from kgym.verify.policy.policy import check_source

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ROOT / "benchmarks" / "kernelbench_level1"
SCRIPT = ROOT / "benchmarks" / "kernelbench_answers.py"
FILES = sorted(ANSWERS.glob("*.py"))


def _script():
    spec = importlib.util.spec_from_file_location("kernelbench_answers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fourteen_answers_with_distinct_ids():
    ids = [int(re.match(r"^(\d+)_.+\.py$", f.name).group(1)) for f in FILES]
    assert len(FILES) == 14 and len(set(ids)) == 14


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_answer_is_a_triton_model_new(path):
    source = path.read_text()
    tree = ast.parse(source)
    assert ast.get_docstring(tree), "an answer opens with a docstring saying what it computes"
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelNew"]
    assert len(classes) == 1
    methods = {n.name for n in classes[0].body if isinstance(n, ast.FunctionDef)}
    assert {"__init__", "forward"} <= methods
    imported = {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    assert {"torch", "triton", "triton.language"} <= imported
    jitted = [n for n in tree.body if isinstance(n, ast.FunctionDef)
              and any(ast.unparse(d) == "triton.jit" for d in n.decorator_list)]
    assert jitted, "no @triton.jit kernel"
    assert "tl.int64" in source, "offsets must be int64: the full-size inputs pass 2^31 bytes"
    result = check_source(source)
    assert result.ok, result.reason
    assert not keeps_torch_op(source), "a level-1 answer does its arithmetic in Triton (the scores' hybrid split)"


def test_script_writes_generations_the_job_reads(tmp_path):
    out = tmp_path / "gen.jsonl"
    assert _script().main(["--out", str(out), "--model", "ref"]) == 0
    gens = read_generations(out)
    assert [g.problem_id for g in gens] == sorted(int(f.name.split("_")[0]) for f in FILES)
    by_id = {int(f.name.split("_")[0]): f for f in FILES}
    for g in gens:
        assert (g.level, g.model, g.sample) == (1, "ref", 0)
        ext = extract_code(g.answer)
        assert ext.ok, ext.reason
        assert ext.code.strip() == by_id[g.problem_id].read_text().strip()


def test_script_picks_ids_and_refuses_unknown(tmp_path):
    script = _script()
    out = tmp_path / "two.jsonl"
    first_two = sorted(int(f.name.split("_")[0]) for f in FILES)[:2]
    script.main(["--out", str(out), "--ids", ",".join(map(str, first_two))])
    assert [g.problem_id for g in read_generations(out)] == first_two
    with pytest.raises(SystemExit, match="no answer for problem id"):
        script.main(["--out", str(tmp_path / "x.jsonl"), "--ids", "99999"])


def test_script_rejects_a_file_without_model_new(tmp_path):
    folder = tmp_path / "answers"
    folder.mkdir()
    (folder / "1_Broken.py").write_text("import torch\n\nclass Model:\n    pass\n")
    with pytest.raises(SystemExit, match="defines no class ModelNew"):
        _script().main(["--answers", str(folder), "--out", str(tmp_path / "g.jsonl")])
