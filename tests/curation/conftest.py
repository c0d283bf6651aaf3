"""Curation fixtures: the synthetic KernelBook file curated once per session (five verifications on
tiny shapes with a real CPU Verifier, its tokenizer the session's tiny model: tests/conftest.py's
`tiny_dir`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "rl"))
import synthetic  # noqa: E402 - test helpers import by name
from curation_helpers import CPU_VERIFY, RUN_ID, curate_config  # noqa: E402

from kgym.curation import CurateConfig, CurationResult, LocalBackend, curate  # noqa: E402


@dataclass(frozen=True)
class Curated:
    config: CurateConfig
    result: CurationResult
    with_kernelbench: bool
    records: Path  # the records root; the run id is RUN_ID


@pytest.fixture(scope="session")
def curated(tmp_path_factory, tiny_dir) -> Curated:
    tmp = tmp_path_factory.mktemp("curate")
    with_kb = synthetic.KB_PROBLEM.is_file()
    config = curate_config(tmp, synthetic.write(tmp / "kernelbook.jsonl", with_kb), tiny_dir)
    backend = LocalBackend(CPU_VERIFY, tmp / "records", RUN_ID, case_secret=b"kgym-tests", flush_rows=1)
    return Curated(config, curate(config, backend), with_kb, tmp / "records")
