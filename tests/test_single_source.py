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
