"""The softmax family's long-row path at a CPU-sized shape: rows wider than the solution's one-tile
limit (4096) take the online two-pass loop, which the tiny size never reaches (a tiny task holds at
most 4096 elements). 4099 = 4096 + 3 leaves a three-column tail block."""

from __future__ import annotations

import pytest

from kgym.tasks import check_task, make


@pytest.mark.parametrize("task_id", ["softmax-v1", "log_softmax-v1"])
def test_long_rows(verifier, task_id):
    task = make(task_id, seed=5, size="tiny", shapes={"batch_size": 3, "dim": 4099})
    result = check_task(task, verifier)
    assert result.ok, "\n".join(result.problems)
    assert result.wrong.gate == "correctness"
