"""RL job test fixtures: the helpers' folder and the RL tests' tiny model builder on sys.path, and `tiny`:
that model and the scripted answers' choice file, built once per module that asks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "rl"))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from rljob_helpers import write_choice_file

    from tiny import save_tiny

    root = tmp_path_factory.mktemp("rljob")
    model, _ = save_tiny(root / "model")
    return model, write_choice_file(root / "choices.json")
