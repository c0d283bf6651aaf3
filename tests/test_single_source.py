"""Concepts spelled once (issue 32): the task families are listed only in kgym.contract.names, and every
reader (the task registry, the RL job's config, the plots' colours) takes that list, so a new family
cannot be refused as unknown by one part and accepted by another; one paired bootstrap; and one
definition per setting: no job section copies a component's config (through a converter typed
`-> Any` or as a dataclass repeating its keys); and no two modules share a file name."""

import ast
import dataclasses
import re
from pathlib import Path

from kgym.contract.names import FAMILIES

ROOT = Path(__file__).resolve().parents[1]
# two family names in a row, quoted: the start of a spelled-out list
LIST = re.compile(r"""["']elementwise["']\s*,\s*["']reduction["']""")


def test_the_family_list_is_spelled_once():
    holders = [p.relative_to(ROOT).as_posix() for folder in ("kgym", "jobs", "ray_cluster", "benchmarks")
               for p in (ROOT / folder).rglob("*.py") if LIST.search(p.read_text())]
    assert holders == ["kgym/contract/names.py"], holders


def test_every_reader_takes_the_one_list():
    import jobs.rl_config
    import kgym.records.plots
    import kgym.tasks.registry

    assert jobs.rl_config.FAMILIES is FAMILIES and kgym.tasks.registry.FAMILIES is FAMILIES
    assert kgym.records.plots.KNOWN_FAMILIES[:len(FAMILIES)] == FAMILIES
    assert {op.family for op in kgym.tasks.registry.operations().values()} == set(FAMILIES)


# a 95% percentile interval computed in place: the mark of a bootstrap written again
INTERVAL = re.compile(r"percentile\([^)]*2\.5")


def test_the_paired_bootstrap_is_written_once():
    """KernelBench's comparison and the RL job's held-out comparison use kgym.bootstrap: one
    implementation and one result type (there were two, with two result types)."""
    import kgym.bootstrap
    import kgym.kernelbench.comparison
    import kgym.training.step_rules

    holders = [p.relative_to(ROOT).as_posix() for folder in ("kgym", "jobs", "ray_cluster")
               for p in (ROOT / folder).rglob("*.py") if INTERVAL.search(p.read_text())]
    assert holders == ["kgym/bootstrap.py"], holders
    assert kgym.kernelbench.comparison.BootstrapResult is kgym.bootstrap.BootstrapResult
    assert kgym.training.step_rules.paired_bootstrap is kgym.bootstrap.paired_bootstrap
    # booleans and their 0/1 shares give the same delta and counts through either path
    a, b = [True, False, False, True, False], [True, True, False, False, True]
    as_bool = kgym.bootstrap.paired_bootstrap(a, b, resamples=4000)
    as_share = kgym.bootstrap.paired_bootstrap([float(x) for x in a], [float(x) for x in b], resamples=4000)
    assert (as_bool.delta_pp, as_bool.gained, as_bool.lost) == (as_share.delta_pp, as_share.gained, as_share.lost)
    assert abs(as_bool.ci95_pp[0] - as_share.ci95_pp[0]) <= 20 and abs(as_bool.ci95_pp[1] - as_share.ci95_pp[1]) <= 20


# -- one definition per setting (issue 32) ---------------------------------------------------------
def _returns_any(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    r = fn.returns
    return (isinstance(r, ast.Name) and r.id == "Any") or (isinstance(r, ast.Attribute) and r.attr == "Any") or \
        (isinstance(r, ast.Constant) and r.value == "Any")


def _modules(*folders: str):
    """(path, its syntax tree) of the Python modules of `folders` (task templates are not Python)."""
    for folder in folders:
        for p in sorted((ROOT / folder).rglob("*.py")):
            try:
                yield p, ast.parse(p.read_text())
            except SyntaxError:
                continue


def _our_configs() -> set[str]:
    """Names of the config classes kgym, jobs and ray_cluster define (*Config, *Settings, *Section)."""
    return {node.name for _, tree in _modules("kgym", "jobs", "ray_cluster") for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef) and node.name.endswith(("Config", "Settings", "Section"))}


def _configs_built(fn: ast.AST, ours: set[str]) -> set[str]:
    """Names of our config classes `fn` calls (constructs)."""
    out = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in ours:
                out.add(name)
    return out


def test_no_untyped_converter_between_a_job_section_and_a_component_config():
    """A job section once copied its component's config field by field in a method typed `-> Any`
    (FarmSection.pool_config, LearnerSection.learner_config, ...): each setting then had two
    definitions and two defaults, and nothing checked that the copy was complete. Job configs are now
    made of the components' configs; what a job hands them is built by typed code."""
    ours = _our_configs()
    assert {"PoolConfig", "LearnerConfig", "EngineConfig", "RecordsConfig", "MetricsConfig"} <= ours
    bad = []
    for p, tree in _modules("jobs", "kgym"):
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and _returns_any(fn):
                built = _configs_built(fn, ours)
                if built:
                    bad.append(f"{p.relative_to(ROOT)}:{fn.lineno} {fn.name}() -> Any builds {sorted(built)}")
    assert not bad, bad


def _sections(cls: type, out: dict[str, type]) -> dict[str, type]:
    from kgym.settings import hints, is_section

    for f in dataclasses.fields(cls):
        if is_section(f):
            t = hints(cls)[f.name]
            out[f"{t.__module__}.{t.__qualname__}"] = t
            _sections(t, out)
    return out


def test_no_job_section_mirrors_a_component_config():
    """Every section a job config holds that comes from the library is a component's own config; a
    dataclass in jobs/ sharing three or more setting names with one of them is a copy of it."""
    import importlib

    from kgym.settings import settings_of

    jobs = [("jobs.verify_config", "VerifyJobConfig"), ("jobs.rl_config", "RLJobConfig"), ("jobs.sft", "SFTJobConfig"),
            ("jobs.eval", "EvalJobConfig"), ("jobs.curate", "CurateJobConfig"), ("jobs.demo", "DemoConfig")]
    found: dict[str, type] = {}
    for module, name in jobs:
        _sections(getattr(importlib.import_module(module), name), found)
    components = {k: set(settings_of(t)) for k, t in found.items() if k.startswith("kgym.")}
    assert {"kgym.farm.farm_config.PoolConfig", "kgym.training.learner_config.LearnerConfig",
            "kgym.rollout.engine.EngineConfig", "kgym.rollout.sampling.SamplingConfig",
            "kgym.tasks.curriculum.CurriculumConfig", "kgym.episodes.env.EpisodeConfig",
            "kgym.sink_config.RecordsConfig", "kgym.sink_config.MetricsConfig"} <= set(components)
    bad = []
    for p in sorted((ROOT / "jobs").glob("*.py")):
        module = importlib.import_module(f"jobs.{p.stem}") if p.stem != "__init__" else None
        for obj in vars(module).values() if module else ():
            if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == module.__name__:
                mine = {f.name for f in dataclasses.fields(obj)}
                for key, theirs in components.items():
                    if len(mine & theirs) >= 3:
                        bad.append(f"{obj.__module__}.{obj.__name__} repeats {sorted(mine & theirs)} of {key}")
    assert not bad, bad


def test_the_record_sink_is_built_from_the_jobs_records_and_metrics():
    """[records] and [metrics] were job sections the record sink's own config copied field by field
    (out as root, port as metrics_port): two definitions and two defaults of each. The sink's config
    is now made of the sections themselves, and every farm job holds those."""
    import importlib

    from kgym.settings import hints, is_inline
    from kgym.sink_config import MetricsConfig, RecordsConfig, SinkConfig

    assert hints(SinkConfig)["records"] is RecordsConfig and hints(SinkConfig)["metrics"] is MetricsConfig
    farm_jobs = [("jobs.verify_config", "VerifyJobConfig"), ("jobs.rl_config", "RLJobConfig"),
                 ("jobs.eval", "EvalJobConfig"), ("jobs.curate", "CurateJobConfig"), ("jobs.demo", "DemoConfig")]
    for module, name in farm_jobs:
        cls = getattr(importlib.import_module(module), name)
        assert hints(cls)["records"] is RecordsConfig, name
        metrics = hints(cls)["metrics"]
        inline = [hints(metrics)[f.name] for f in dataclasses.fields(metrics) if is_inline(f)]
        assert metrics is MetricsConfig or inline == [MetricsConfig], name


# -- one file per basename (issue 32) --------------------------------------------------------------
# Files that are data read as text, not modules (task templates, the prompt's worked example, the
# bundled example, the demo's hostile answers): tests/test_imports.py's DATA, plus the demo's answers.
DATA = ("kgym/tasks/families/*/*.py", "kgym/tasks/prompt_example/*.py", "kgym/examples/*/*.py",
        "jobs/demo_answers/*.py")
# __init__.py is every package's; nothing else may repeat.
ALLOWED_REPEATS = {"__init__.py"}


def test_no_two_modules_share_a_basename():
    """Three prompts.py, two worker.py, baselines.py, evaluator.py, ... sent a newcomer (and a search
    by file name) to the wrong one: each basename now says which it is."""
    seen: dict[str, list[str]] = {}
    for folder in ("kgym", "jobs", "ray_cluster"):
        for p in sorted((ROOT / folder).rglob("*.py")):
            rel = p.relative_to(ROOT)
            if "__pycache__" in p.parts or any(rel.match(pattern) for pattern in DATA):
                continue
            seen.setdefault(p.name, []).append(rel.as_posix())
    repeated = {name: paths for name, paths in seen.items() if len(paths) > 1 and name not in ALLOWED_REPEATS}
    assert not repeated, repeated
