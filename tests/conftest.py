"""Shared fixtures: one CPU verifier with a warm spare for the whole session, fixture sources."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch

from kgym.verify import Verifier, VerifyConfig

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from paths import fixture_source  # noqa: E402 - tests import fixture helpers from `paths`, not conftest


@pytest.fixture(scope="session")
def verifier():
    """A CPU verifier; the hidden-case secret is fixed so failures reproduce."""
    with Verifier(VerifyConfig(device="cpu", timed_runs=5, warmup_runs=1, max_remeasure=1),
                  spares=1, cache_dir=os.environ.get("KGYM_TEST_CACHE"), case_secret=b"kgym-tests") as v:
        yield v


@pytest.fixture(scope="session")
def relu_reference() -> str:
    return fixture_source("relu", "reference")


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run on the H200)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
