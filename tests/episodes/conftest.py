"""Episode fixtures: one cached LocalEvaluator over the session's CPU verifier (its verdict cache
means each distinct answer is verified once per session), tiny tasks."""

from __future__ import annotations

import pytest

from kgym.episodes import CachedEvaluator, LocalEvaluator
from kgym.tasks import make


@pytest.fixture(scope="session")
def evaluator(verifier):
    local = LocalEvaluator(verifier)
    yield CachedEvaluator(local)
    local.close()


@pytest.fixture(scope="session")
def relu():
    return make("relu-v1", seed=1, size="tiny")
