"""Curation test helpers, imported by name (`from curation_helpers import ...`): a `from conftest
import` would resolve to whichever folder's conftest.py is first on sys.path (tests/fixtures/cache_dirs.py
says the same), and did: run after tests/episodes, it found that folder's conftest."""

from __future__ import annotations

from pathlib import Path

import synthetic

from kgym.curation import CurateConfig

# Tiny shapes and few timed runs: the Triton interpreter pays ~0.7 ms per program launched.
CPU_VERIFY = {"device": "cpu", "timed_runs": 3, "warmup_runs": 1, "max_remeasure": 0}
RUN_ID = "synthetic"


def curate_config(tmp: Path, source: Path, tokenizer: Path, **kw) -> CurateConfig:
    kb = synthetic.KERNELBENCH if synthetic.KB_PROBLEM.is_file() else None
    base = dict(input=str(source), out=str(tmp / "out"), kernelbench=None if kb is None else str(kb),
                target_elements=2048, size="tiny", tokenizer=str(tokenizer))
    base.update(kw)
    return CurateConfig(**base)
