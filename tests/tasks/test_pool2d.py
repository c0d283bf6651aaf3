"""pool2d edge cases the seed rarely draws: inputs narrower than the window, where only the padding
lets a window fit and the count_include_pad divisor and the -inf pads decide every output; and the
clear error for a window that cannot fit."""

from __future__ import annotations

import pytest

from kgym.tasks import check_task, make
from kgym.tasks.spec import TaskError

NARROW = [
    ("avg_pool2d_padded-v1", {"batch_size": 1, "channels": 3, "height": 2, "width": 9, "kernel_size": 3, "stride": 2}),
    ("max_pool2d_padded-v1", {"batch_size": 2, "channels": 1, "height": 7, "width": 1, "kernel_size": 2, "stride": 2}),
]


@pytest.mark.parametrize("task_id,shapes", NARROW, ids=[t for t, _ in NARROW])
def test_windows_wider_than_the_input(verifier, task_id, shapes):
    result = check_task(make(task_id, seed=3, size="tiny", shapes=shapes), verifier)
    assert result.ok, "\n".join(result.problems)
    assert result.wrong.gate == "correctness"


def test_window_that_does_not_fit_is_refused():
    shapes = {"batch_size": 1, "channels": 1, "height": 2, "width": 9, "kernel_size": 3, "stride": 1}
    with pytest.raises(TaskError, match="does not fit"):
        make("max_pool2d-v1", seed=1, size="tiny", shapes=shapes)
