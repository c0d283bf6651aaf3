"""kgym's own KernelBench level-1 answers (benchmarks/kernelbench_level1/) pass every gate against their real
problems, shrunk: the honest side of the verifier (issue 29: an honest kernel is never refused). Each
problem is read from the KernelBench checkout beside the project (../shared/kernelbench; skipped where it
is absent), its module-level sizes (integers above 16: batch, features, dims) replaced by small ones so the
CPU's Triton interpreter runs it in seconds, and the answer verified by the session's verifier. The sizes
are chosen so the answers' loops run more than one tile and end on a partial one (LayerNorm's 2,200-element
rows span three 1,024-element chunks). The full-size run is the GPU's, through `jobs.eval`
(docs/kernelbench.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from paths import shared_kernelbench

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ROOT / "benchmarks" / "kernelbench_level1"
LEVEL1 = shared_kernelbench() / "KernelBench" / "level1"
SMALL = (3, 20, 10, 11)  # given in order to a problem's sizes above KEEP_AT_MOST
KEEP_AT_MOST = 16  # dims to reduce over, eps-like counts: kept as they are


ARITHMETIC = (ast.Expression, ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop)


def _int_value(node: ast.expr) -> int | None:
    """The value of an integer literal or of arithmetic on literals (`16384 * 4`); None for anything else."""
    tree = ast.Expression(node)
    if not all(isinstance(n, ARITHMETIC) for n in ast.walk(tree)):
        return None
    value = eval(compile(tree, "<size>", "eval"), {"__builtins__": {}})  # literals and operators only
    return value if type(value) is int else None


def shrink(source: str) -> str:
    """The problem with each module-level `NAME = <integer above 16>` (a literal or arithmetic on literals)
    set to the next of SMALL. Sizes derived from other names follow them."""
    tree = ast.parse(source)
    lines = source.splitlines()
    sizes = iter(SMALL)
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _int_value(node.value)
            if value is not None and value > KEEP_AT_MOST:
                assert node.lineno == node.end_lineno, f"a size over several lines: {ast.unparse(node)}"
                lines[node.lineno - 1] = f"{node.targets[0].id} = {next(sizes)}"
    return "\n".join(lines) + "\n"


def _elements(problem: str) -> int:
    """Elements of the shrunk problem's inputs: a size the shrinking missed must fail here, not fill the
    CI machine's memory (a missed `M = 16384 * 4` asked for 4 GiB)."""
    scope: dict = {}
    exec(compile(problem, "<problem>", "exec"), scope)
    return sum(x.numel() for x in scope["get_inputs"]() if hasattr(x, "numel"))


def _problem(answer: Path) -> Path:
    return LEVEL1 / answer.name


ANSWER_FILES = sorted(ANSWERS.glob("*.py"), key=lambda p: int(p.name.split("_")[0]))


def test_shrink_sets_only_the_large_sizes():
    source = "import torch\nbatch_size = 4096\ndim = 393216\nreduce_dim = 1\neps = 1e-5\n"
    assert shrink(source) == "import torch\nbatch_size = 3\ndim = 20\nreduce_dim = 1\neps = 1e-5\n"
    derived = "M = 16384 * 4\nN = -(-4096 // 2)\nK = M * 2\n"
    assert shrink(derived) == "M = 3\nN = 20\nK = M * 2\n"


@pytest.mark.skipif(not LEVEL1.is_dir(), reason="no KernelBench checkout ($KGYM_KERNELBENCH or ../shared/kernelbench)")
@pytest.mark.parametrize("answer", ANSWER_FILES, ids=[p.stem for p in ANSWER_FILES])
def test_the_answer_passes_its_problem_shrunk(verifier, answer):
    problem = _problem(answer)
    assert problem.is_file(), f"{answer.name}: no KernelBench problem of that name at {LEVEL1}"
    small = shrink(problem.read_text())
    assert _elements(small) <= 10_000, f"{problem.name} was not shrunk"
    v = verifier.verify(small, answer.read_text(), seed=0)
    assert v.passed, (answer.name, v.gate, v.reason)
