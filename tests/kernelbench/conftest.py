"""Fixtures of the KernelBench tests: a KernelBench-shaped checkout of kgym's own tiny problems."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from kb_fake import make_checkout  # noqa: E402


@pytest.fixture
def checkout_dir(tmp_path) -> Path:
    return make_checkout(tmp_path / "kb")
