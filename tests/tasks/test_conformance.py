"""`check_task` over every registered task and stage at the tiny size, on the CPU: the reference
solution passes every gate, the known-wrong answer fails, seeds are deterministic, hidden cases are
hidden. Select one family with `-k <family>`."""

from __future__ import annotations

import pytest

from kgym.tasks import FAMILIES, check_task, make, operations

CASES = [(op.family, tid, stage) for tid, op in operations().items() for stage in op.stages]


@pytest.mark.parametrize("family,task_id,stage", CASES, ids=[f"{f}/{t}/{s}" for f, t, s in CASES])
def test_check_task(verifier, family, task_id, stage):
    task = make(task_id, seed=11, size="tiny", stage=stage)
    result = check_task(task, verifier)
    assert result.ok, "\n".join(result.problems)
    if task.wrong is not None:
        assert result.wrong.gate is not None and result.wrong.error is None


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_has_operations_and_a_wrong_answer(family):
    ops = [op for op in operations().values() if op.family == family]
    assert ops, f"family {family} registers no operation"
    assert any(op.wrong for op in ops), f"family {family} has no known-wrong answer"
