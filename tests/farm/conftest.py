"""One embedded Ray instance for the farm tests that need one in-process (declaring 2 GPUs on the
CPU, so placement is testable: tests that want CPU workers ask for them), shut down at the end."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def ray_local():
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=3, num_gpus=2, object_store_memory=200 * 2**20, include_dashboard=False,
             log_to_driver=False)
    yield ray
    ray.shutdown()
