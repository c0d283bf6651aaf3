"""RL test fixtures: one tiny model directory per session (tests/rl/tiny.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from tiny import save_tiny  # noqa: E402 - tests import the helper as `tiny`


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> Path:
    path, _ = save_tiny(tmp_path_factory.mktemp("tiny-qwen2"))
    return path


@pytest.fixture(scope="session")
def tiny_tok(tiny_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_dir)
