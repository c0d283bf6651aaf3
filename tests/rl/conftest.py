"""RL test fixtures: one torch thread per test. The tiny model directory (`tiny_dir`, `tiny_tok`) is the
session's, tests/conftest.py's (built by tests/rl/tiny.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests import the helper as `tiny`


@pytest.fixture(autouse=True)
def one_torch_thread():
    """The tiny model gains nothing from a second thread, and on a shared 2-core machine torch's
    spinning worker threads made these tests 5-20x slower (the learning test: 84 s against 14 s).
    Restored after each test, so other folders' tests keep their setting."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
