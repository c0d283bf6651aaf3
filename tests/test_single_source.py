"""Concepts spelled once (issue 32): the task families are listed only in kgym.contract.names, and every
reader (the task registry, the RL job's config, the plots' colours) takes that list, so a new family
cannot be refused as unknown by one part and accepted by another."""

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
    import kgym.kernelbench.bootstrap
    import kgym.training.step_rules

    holders = [p.relative_to(ROOT).as_posix() for folder in ("kgym", "jobs", "ray_cluster")
               for p in (ROOT / folder).rglob("*.py") if INTERVAL.search(p.read_text())]
    assert holders == ["kgym/bootstrap.py"], holders
    assert kgym.kernelbench.bootstrap.BootstrapResult is kgym.bootstrap.BootstrapResult
    assert kgym.training.step_rules.paired_bootstrap is kgym.bootstrap.paired_bootstrap
    # booleans and their 0/1 shares give the same delta and counts through either path
    a, b = [True, False, False, True, False], [True, True, False, False, True]
    as_bool = kgym.bootstrap.paired_bootstrap(a, b, resamples=4000)
    as_share = kgym.bootstrap.paired_bootstrap([float(x) for x in a], [float(x) for x in b], resamples=4000)
    assert (as_bool.delta_pp, as_bool.gained, as_bool.lost) == (as_share.delta_pp, as_share.gained, as_share.lost)
    assert abs(as_bool.ci95_pp[0] - as_share.ci95_pp[0]) <= 20 and abs(as_bool.ci95_pp[1] - as_share.ci95_pp[1]) <= 20
