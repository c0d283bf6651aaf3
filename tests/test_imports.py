"""The import graph of the library, pinned by static analysis (ast over every module of `kgym/`).

What it holds: the library never imports Ray (at any level: module, function or TYPE_CHECKING);
`kgym.contract` imports no torch (statically, and `import kgym.contract` in a fresh process leaves torch
out of `sys.modules`); nothing imports upward (`kgym.reward` never reaches `kgym.verify`, the CLI's
subcommand modules never import `kgym.cli`); the module-level imports of `kgym` have no cycle; and
every public module imports as the first import of a fresh process (the circular import that broke
`from kgym.reward import RewardConfig` was invisible to tests that had imported something else first).
The other side of the wall: every module of `ray_cluster/` imports Ray (Ray-free code belongs in the
library, where it is tested without Ray), the package's lazy export table excepted.

What it does not hold: imports made through `importlib` or `__import__` with a computed name (the
library has none; the verifier's child imports the candidate's file by path, which is not a kgym
module). The CLI may import `jobs` (the Ray entrypoints) inside the functions that run a Ray job:
that is the one door from the library to the farm, and a test below keeps it lazy.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "kgym"


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name of the importing file
    target: str  # dotted name as written (absolute), or the resolved module of a `from X import Y`
    line: int
    level: str  # "module" (runs at import), "function" (inside a def) or "typing" (TYPE_CHECKING only)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


# Python files that are data, read as text (task templates, the prompt's worked example, the bundled
# example, the child's warm-up kernel, which it imports by path outside the package): not modules.
DATA = ("kgym/tasks/families/*/*.py", "kgym/tasks/prompt_example/*.py", "kgym/examples/*/*.py",
        "kgym/verify/candidate/warmup_kernel.py")


def _is_data(path: Path) -> bool:
    rel = path.relative_to(ROOT)
    return path.name != "__init__.py" and any(rel.match(pattern) for pattern in DATA)


def lib_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(LIB.rglob("*.py"))
            if "__pycache__" not in p.parts and (p.parent / "__init__.py").exists() and not _is_data(p)}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve_relative(importer: str, is_pkg: bool, level: int, module: str | None) -> str:
    base = importer.split(".") if is_pkg else importer.split(".")[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([module] if module else []))


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """Every import statement of one file, with the level at which it runs."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_pkg = path.name == "__init__.py"
    found: list[Import] = []

    def visit(node: ast.AST, level: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, "function" if level == "module" else level)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    visit(ast.Module(body=[stmt], type_ignores=[]), "typing")
                for stmt in child.orelse:
                    visit(ast.Module(body=[stmt], type_ignores=[]), level)
            elif isinstance(child, ast.Import):
                found.extend(Import(name, a.name, child.lineno, level) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    base = _resolve_relative(name, is_pkg, child.level, child.module)
                found.append(Import(name, base, child.lineno, level))
                for a in child.names:  # `from pkg import submodule` imports the submodule too
                    if f"{base}.{a.name}" in modules:
                        found.append(Import(name, f"{base}.{a.name}", child.lineno, level))
            else:
                visit(child, level)

    visit(tree, "module")
    return found


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def graph(levels: tuple[str, ...] = ("module",)) -> dict[str, set[str]]:
    """kgym module -> the kgym modules whose code runs when it is imported (at the given levels).

    Importing `a.b.c` runs `a`, `a.b` and `a.b.c`; the packages that also contain the importer are
    already being imported when it runs, so they add no edge (they are where every import enters)."""
    modules = lib_modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        own = set(_ancestors(name)) | {name}
        for imp in imports_of(name, path, modules):
            if imp.level not in levels:
                continue
            for target in [*_ancestors(imp.target), imp.target]:
                if target in modules and target not in own:
                    edges[name].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for w in edges.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def all_imports() -> list[Import]:
    modules = lib_modules()
    return [imp for name, path in modules.items() for imp in imports_of(name, path, modules)]


def _top(target: str) -> str:
    return target.split(".")[0]


# --- the analysis itself -------------------------------------------------------------------------------


def test_analysis_sees_every_kind_of_import(tmp_path):
    src = ("import os\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import ray\n"
           "def f():\n    import torch\n    from kgym.contract import ids\n")
    (tmp_path / "m.py").write_text(src)
    found = {(i.target, i.level) for i in imports_of("m", tmp_path / "m.py", {"kgym.contract.ids": Path()})}
    assert found == {("os", "module"), ("typing", "module"), ("ray", "typing"), ("torch", "function"),
                     ("kgym.contract", "function"), ("kgym.contract.ids", "function")}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_every_library_file_is_a_module():
    assert len(lib_modules()) > 80
    assert {"kgym", "kgym.contract", "kgym.reward", "kgym.cli", "kgym.verify.parent.verifier"} <= set(lib_modules())


# --- the rules -----------------------------------------------------------------------------------------


def test_library_never_imports_ray():
    bad = [f"{i.importer}:{i.line} imports {i.target} ({i.level})" for i in all_imports() if _top(i.target) == "ray"]
    assert not bad, bad


def test_library_reaches_the_farm_only_lazily_from_the_cli():
    """`jobs`/`ray_cluster` hold the Ray code; only the CLI's job commands may import them, inside a
    function, so `import kgym.<anything>` never starts Ray."""
    bad = [f"{i.importer}:{i.line} imports {i.target} ({i.level})" for i in all_imports()
           if _top(i.target) in ("jobs", "ray_cluster")
           and not (i.importer in ("kgym.cli", "kgym.cli_eval") and i.level == "function")]
    assert not bad, bad


# The one function of the contract that reads the heavy stack: WorkerInfo.here() describes the worker
# process it runs in (torch and Triton versions, the GPU's name), which has torch already.
CONTRACT_FUNCTION_IMPORTS = {("kgym.contract.worker_info", "torch"), ("kgym.contract.worker_info", "triton")}


def test_contract_imports_no_torch_statically():
    contract = [i for i in all_imports() if i.importer == "kgym.contract" or i.importer.startswith("kgym.contract.")]
    assert contract, "no imports found in kgym.contract"
    heavy = {"torch", "triton", "numpy", "ray", "pandas", "pyarrow"}
    bad = [f"{i.importer}:{i.line} imports {i.target} ({i.level})" for i in contract if _top(i.target) in heavy
           and not (i.level == "function" and (i.importer, i.target) in CONTRACT_FUNCTION_IMPORTS)]
    assert not bad, bad
    inside = [i for i in contract if _top(i.target) == "kgym"]
    assert all(i.target.startswith("kgym.contract") or i.target == "kgym" for i in inside), inside
    # and nothing it pulls in at any level leaves the contract
    edges = graph(levels=("module", "function", "typing"))
    assert reachable(edges, "kgym.contract") <= {m for m in edges if m.startswith("kgym.contract")} | {"kgym"}


def test_contract_leaves_torch_out_of_a_fresh_process():
    heavy = ("torch", "triton", "ray", "numpy")
    code = f"import sys, kgym.contract; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def test_reward_does_not_import_the_verifier():
    """Upward: the scorer reads verdicts (the contract); the verifier produces them. Any level."""
    edges = graph(levels=("module", "function", "typing"))
    reached = reachable(edges, "kgym.reward")
    assert not {m for m in reached if m == "kgym.verify" or m.startswith("kgym.verify.")}, sorted(reached)


def test_records_and_metrics_read_verdicts_without_the_verifier():
    """They learn every name from kgym.contract (the issue: records and metrics reached into the
    verifier for the verdict type, and so imported torch). Any level."""
    edges = graph(levels=("module", "function", "typing"))
    for start in ("kgym.records", "kgym.metrics"):
        reached = reachable(edges, start)
        assert not {m for m in reached if m.startswith("kgym.verify")}, (start, sorted(reached))


def test_answer_extraction_is_reached_without_episodes():
    """KernelBench evaluation and SFT curation extract code from answers (kgym.answers) without
    importing kgym.episodes."""
    edges = graph(levels=("module", "function", "typing"))
    for start in ("kgym.answers", "kgym.kernelbench", "kgym.curation"):
        if start not in edges:
            continue
        reached = reachable(edges, start)
        assert not {m for m in reached if m.startswith("kgym.episodes")}, (start, sorted(reached))


def test_cli_subcommands_do_not_import_the_cli():
    subcommands = [m for m in lib_modules() if m.startswith("kgym.cli_")]
    assert subcommands, "no kgym.cli_* modules found"
    bad = [f"{i.importer}:{i.line} imports {i.target} ({i.level})" for i in all_imports()
           if i.importer in subcommands and (i.target == "kgym.cli" or i.target.startswith("kgym.cli."))]
    assert not bad, bad


def test_no_cycles_among_module_level_imports():
    assert cycles(graph()) == []


def test_no_cycles_counting_function_level_imports():
    """A function-level import back into a module that imports you is still a cycle (the issue found
    two: cli with cli_eval and cli_tasks, tasks.task with tasks.prompts); only TYPE_CHECKING imports,
    which never run, may point back."""
    assert cycles(graph(levels=("module", "function"))) == []


# --- ray_cluster/ holds Ray's side only (issue 32) ---------------------------------------------------------

# ray_cluster modules that need not import Ray, and why.
RAY_FREE_FARM_MODULES = {
    "ray_cluster": "the package's lazy export table (PEP 562): `from ray_cluster import X` imports only X's module",
}


def test_every_farm_module_imports_ray():
    """A module of `ray_cluster/` that imports no Ray when it is imported holds Ray-free code, which
    belongs in the library (`kgym/farm`, `kgym/training`, `kgym/rollout`: the actors wrap it), where
    it is tested without a Ray instance. The prefetcher, the placement rules, the autoscaler ask and
    the farm's counters once lived here."""
    farm = ROOT / "ray_cluster"
    modules = {module_name(p): p for p in sorted(farm.rglob("*.py")) if "__pycache__" not in p.parts}
    assert {"ray_cluster.service", "ray_cluster.worker"} <= set(modules)
    bad = []
    for name, path in modules.items():
        found = imports_of(name, path, {})
        if name not in RAY_FREE_FARM_MODULES and not any(_top(i.target) == "ray" and i.level == "module"
                                                         for i in found):
            bad.append(name)
    assert not bad, f"{bad}: no module-level Ray import; move the code into kgym/ or list it with a reason"
    assert set(RAY_FREE_FARM_MODULES) <= set(modules), "an exemption names a module that is gone"


# --- the verifier's rooms (issue 29: one room per process; kgym/verify/__init__.py) ---------------------

# kgym.verify's subpackages, and which rooms each may import (at any level): the candidate's process
# never runs the trusted parent's code (reference outputs, comparison, score) nor the static policy.
ROOMS = ("parent", "candidate", "policy")
MAY_IMPORT = {"parent": {"parent", "candidate", "policy", "shared"}, "candidate": {"candidate", "shared"},
              "policy": {"policy", "shared"}, "shared": {"shared"}}


def verify_room(module: str) -> str | None:
    """The room of a module of kgym.verify: a subpackage's name, "shared" for a top-level module of
    kgym.verify, None for the package itself and anything outside it."""
    parts = module.split(".")
    if parts[:2] != ["kgym", "verify"] or len(parts) < 3:
        return None
    return parts[2] if parts[2] in ROOMS else "shared"


def test_every_verify_module_has_a_room():
    rooms = {m: verify_room(m) for m in lib_modules() if m.startswith("kgym.verify.")}
    assert {"kgym.verify.parent.verifier", "kgym.verify.candidate.child", "kgym.verify.policy.policy",
            "kgym.verify.wire"} <= set(rooms)
    assert set(rooms.values()) == {*ROOMS, "shared"}, rooms
    for room in ROOMS:
        assert f"kgym.verify.{room}" in lib_modules(), f"kgym/verify/{room}/ has no __init__.py"


def test_candidate_code_never_imports_parent_code():
    """Directly (any import statement, at any level) and through anything it imports."""
    direct = [f"{i.importer}:{i.line} imports {i.target} ({i.level})" for i in all_imports()
              if verify_room(i.importer) == "candidate" and verify_room(i.target) == "parent"]
    assert not direct, direct
    edges = graph(levels=("module", "function", "typing"))
    for module in (m for m in edges if verify_room(m) == "candidate"):
        reached = sorted(m for m in reachable(edges, module) if verify_room(m) == "parent")
        assert not reached, (module, reached)


def test_imports_between_rooms_flow_one_way():
    """parent -> candidate, policy, shared; candidate -> shared; policy -> shared; shared -> shared."""
    bad = [f"{i.importer}:{i.line} ({verify_room(i.importer)}) imports {i.target} ({verify_room(i.target)})"
           for i in all_imports() if verify_room(i.importer) and verify_room(i.target)
           and verify_room(i.target) not in MAY_IMPORT[verify_room(i.importer)]]
    assert not bad, bad


def test_the_rule_sees_a_candidate_module_importing_the_parent(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n    from kgym.verify.parent import sandbox\n")
    found = imports_of("kgym.verify.candidate.m", tmp_path / "m.py", lib_modules())
    assert any(verify_room(i.target) == "parent" for i in found), found
    assert verify_room("kgym.verify.accessors") == "shared" and verify_room("kgym.verify") is None


_FOREIGN = "sorted(m for m in sys.modules if m.startswith(('kgym.verify.parent', 'kgym.verify.policy')))"


def _loaded_in_a_fresh_process(code: str) -> list[str]:
    """The lines `code` prints, then the parent's and policy's modules loaded at its end."""
    # -P with this checkout first on the path, as the sandbox starts the child and the zygote
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-P", "-c", f"import sys\n{code}\nprint({_FOREIGN})"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()


def test_the_candidates_process_loads_no_parent_module():
    """A cold candidate process imports kgym.verify.candidate.child (its `python -m`), and importing a
    submodule runs kgym/verify/__init__.py first: the package's public API is lazy (PEP 562), so the
    trusted parent's verifier, reference, cases and the static policy stay out of its address space."""
    assert _loaded_in_a_fresh_process("import kgym.verify.candidate.child")[-1] == "[]"


def test_the_zygote_loads_no_parent_module():
    """The zygote runs `import kgym.verify.candidate.zygote as z; z.main()`, whose preload is everything a
    forked candidate process starts with; nothing of the parent's room or the policy's is in it."""
    assert _loaded_in_a_fresh_process("import kgym.verify.candidate.zygote as z\nz._preload()")[-1] == "[]"


def test_the_public_api_is_lazy_and_complete():
    """`import kgym.verify` loads nothing; every public name resolves, to the object of its home module."""
    code = ("import kgym.verify as v\nbefore = " + _FOREIGN + "\n"
            "names = sorted(v.__all__)\nassert all(n in dir(v) for n in names)\n"
            "from kgym.verify import Verifier, VerifyConfig, verify, load_reference\n"
            "from kgym.verify.parent.verifier import Verifier as V\nassert Verifier is V\n"
            "[getattr(v, n) for n in names]\nprint(before)")
    before, after = _loaded_in_a_fresh_process(code)[-2:]
    assert before == "[]" and "kgym.verify.parent.verifier" in after, (before, after)
    import kgym.verify as v

    with pytest.raises(AttributeError):
        v.no_such_name  # noqa: B018


def test_the_candidate_room_takes_only_submodules_from_the_package():
    """`from kgym.verify import X` in the candidate's room must name a shared submodule: a public name of
    the package (Verifier, verify, ...) would load the parent's room through its lazy __getattr__, which
    the static graph above cannot see."""
    modules = lib_modules()
    bad = []
    for name, path in modules.items():
        if verify_room(name) != "candidate":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "kgym.verify" and not node.level:
                bad += [f"{name}:{node.lineno} {a.name}" for a in node.names if f"kgym.verify.{a.name}" not in modules]
    assert not bad, bad


# --- first import of a fresh process ---------------------------------------------------------------------

_DATA_PACKAGES = ("kgym.tasks.families", "kgym.tasks.prompt_example")  # task files, not an API


def public_modules() -> list[str]:
    """Every package and every top-level module of the library (what users and the other layers import),
    plus the modules the README names."""
    named = ["kgym.records.replay", "kgym.records.plots", "kgym.records.schema", "kgym.tasks.prompts",
             "kgym.tasks.curriculum", "kgym.verify.parent.verifier", "kgym.farm.farm_config"]
    out = {m for m, p in lib_modules().items() if p.name == "__init__.py" or m.count(".") == 1}
    out = {m for m in out if not m.startswith(_DATA_PACKAGES)}
    return sorted(out | {m for m in named if m in lib_modules()})


def _first_import(statement: str) -> subprocess.CompletedProcess:
    code = f"{statement}\nimport sys\nprint('ray' in sys.modules)"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_reward_config_as_the_first_import():
    out = _first_import("from kgym.reward import RewardConfig\nRewardConfig()")
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("module", public_modules())
def test_public_module_as_the_first_import(module):
    out = _first_import(f"import {module}")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False", f"importing {module} started Ray"


def test_building_the_cli_parser_starts_no_ray():
    """`kgym --help` builds every subcommand's parser, the demo's from jobs/demo.py: none of it may
    import Ray (a `kgym verify` user needs no farm)."""
    out = _first_import("from kgym.cli import build_parser\nbuild_parser()")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False", "building kgym's parser imported Ray"
