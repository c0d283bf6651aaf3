"""Prompts come from the checkout's own constructor, called for the Triton backend, one-shot, FP32."""

from __future__ import annotations

import json
import sys

import pytest

from kgym.cli import main
from kgym.kernelbench import Checkout, KernelBenchError, build_prompts

from kb_fake import make_checkout


def test_problems_are_read_from_the_checkout(checkout_dir):
    ck = Checkout(checkout_dir)
    assert ck.levels() == [1, 2]
    ps = ck.problems(1)
    assert [(p.problem_id, p.name) for p in ps] == [(1, "TripleIt"), (2, "ShiftUp")]
    assert "x * 3.0" in ps[0].source
    with pytest.raises(KernelBenchError, match="no problem with id"):
        ck.problems(1, [7])
    with pytest.raises(KernelBenchError, match="no level3"):
        ck.problems(3)


@pytest.mark.parametrize("layout,module", [("src", "src.prompt_constructor_toml"),
                                           ("package", "kernelbench.prompt_constructor_toml")])
def test_prompt_is_the_constructors_own(tmp_path, layout, module):
    ck = Checkout(make_checkout(tmp_path / layout, layout))
    rows = build_prompts(ck, 1)
    assert [r.problem_id for r in rows] == [1, 2]
    first = rows[0]
    assert first.constructor == module
    assert first.prompt.startswith("Write triton kernels (one_shot, fp32) for this module.")
    assert "# an example answer of the fake checkout" in first.prompt  # read from the checkout's files
    assert first.prompt.endswith(ck.problems(1)[0].source)
    assert not any(m.split(".")[0] in ("src", "kernelbench") for m in sys.modules)  # import was isolated


def test_older_constructor_without_option_or_precision(tmp_path):
    ck = Checkout(make_checkout(tmp_path / "old", "old"))
    rows = build_prompts(ck, 2)
    assert rows[0].prompt.startswith("old constructor for triton\n")
    with pytest.raises(KernelBenchError, match="no precision argument"):
        build_prompts(ck, 2, precision="bf16")


def test_missing_constructor_is_named(tmp_path):
    ck = Checkout(make_checkout(tmp_path / "bare", "none"))
    with pytest.raises(KernelBenchError, match="src/prompt_constructor_toml.py"):
        build_prompts(ck, 1)


def test_not_a_checkout(tmp_path):
    with pytest.raises(KernelBenchError, match="not a directory"):
        Checkout(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(KernelBenchError, match="level"):
        Checkout(tmp_path / "empty")


def test_cli_prompts_jsonl(checkout_dir, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    assert main(["eval", "prompts", "--kernelbench", str(checkout_dir), "--level", "1", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["level"], r["problem_id"]) for r in rows] == [(1, 1), (1, 2)]
    assert all(r["prompt"] and r["backend"] == "triton" and r["precision"] == "fp32" for r in rows)
    out3 = tmp_path / "p3.jsonl"
    assert main(["eval", "prompts", "--kernelbench", str(checkout_dir), "--level", "2", "--out", str(out3),
                 "--samples", "3", "--seed", "10"]) == 0
    rows3 = [json.loads(line) for line in out3.read_text().splitlines()]
    assert [(r["sample"], r["seed"]) for r in rows3] == [(0, 10), (1, 11), (2, 12)]
    assert main(["eval", "prompts", "--kernelbench", str(tmp_path / "nope"), "--level", "1",
                 "--out", str(out)]) == 2


def test_constructor_with_missing_dependency_says_so(tmp_path):
    root = make_checkout(tmp_path / "deps", "src")
    f = root / "src" / "prompt_constructor_toml.py"
    f.write_text("import kgym_no_such_module_xyz\n" + f.read_text())
    with pytest.raises(KernelBenchError, match="kgym_no_such_module_xyz.*requirements.txt"):
        build_prompts(Checkout(root), 1)


def test_multilang_constructor_shaped_like_the_real_one(tmp_path, monkeypatch):
    # The real src/prompt_constructor_multilang.py: `src/__init__` imports a helpers module, the
    # constructor imports from it relatively and finds its example from its own path; it takes
    # (ref_arch_src, backend) only. Built from another working directory, and imported in isolation.
    ck = Checkout(make_checkout(tmp_path / "ml", "multilang"))
    monkeypatch.chdir(tmp_path)
    rows = build_prompts(ck, 1, ids=[2])
    assert [(r.problem_id, r.constructor, r.option, r.precision) for r in rows] == [
        (2, "src.prompt_constructor_multilang", "one_shot", "fp32")]
    assert rows[0].prompt.startswith("multilang constructor for triton\nExample:\n# an example answer")
    assert rows[0].prompt.endswith(ck.problem(1, 2).source)
    assert not any(m.split(".")[0] in ("src", "kernelbench") for m in sys.modules)


def test_multilang_package_init_with_missing_dependency_says_so(tmp_path):
    # The real checkout's API clients are imported by src/utils.py through src/__init__.py, before
    # the constructor module itself runs: that failure must name the checkout's requirements too.
    root = make_checkout(tmp_path / "mldeps", "multilang")
    helpers = root / "src" / "helpers.py"
    helpers.write_text("import kgym_no_such_client_xyz\n" + helpers.read_text())
    with pytest.raises(KernelBenchError, match="kgym_no_such_client_xyz.*requirements.txt"):
        build_prompts(Checkout(root), 1)
