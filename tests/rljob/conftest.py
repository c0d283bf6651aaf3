"""RL job test fixtures: the helpers' folder and the RL tests' tiny model builder on sys.path, and `tiny`:
the session's tiny model and the scripted answers' choice file (one per module until 2026-12-07)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "rl"))


@pytest.fixture(scope="session")
def tiny(tiny_dir, tmp_path_factory):
    """(the session's tiny model directory, tests/conftest.py's; the scripted answers' choice file). The
    jobs only read the model."""
    from rljob_helpers import write_choice_file

    return tiny_dir, write_choice_file(tmp_path_factory.mktemp("rljob") / "choices.json")
