"""fused_hybrid: every stage is hybrid, impossible shapes are refused with a reason, the epilogue
scaffold keeps the library call and cuts the tail. No verification: cheap."""

from __future__ import annotations

import pytest

from kgym.tasks import TaskError, make, task_ids


@pytest.mark.parametrize("task_id", task_ids("fused_hybrid"))
def test_every_stage_is_hybrid(task_id):
    for stage in ("full", "small", "epilogue"):
        assert make(task_id, 5, size="tiny", stage=stage).spec.answer_mode == "hybrid"


def test_groupnorm_needs_whole_groups():
    with pytest.raises(TaskError, match="multiple of num_groups"):
        make("linear_groupnorm_relu-v1", 1, size="tiny",
             shapes={"batch_size": 8, "in_features": 16, "out_features": 30, "num_groups": 4})


def test_conv_needs_room_for_the_kernel():
    with pytest.raises(TaskError, match="at least kernel_size"):
        make("conv_relu_bias-v1", 1, size="tiny",
             shapes={"batch_size": 1, "in_channels": 3, "out_channels": 4, "height": 2, "width": 9})


@pytest.mark.parametrize("task_id,call", [("linear_max_gelu-v1", "F.linear("),
                                          ("conv_relu_bias-v1", "self.conv(x)")])
def test_epilogue_keeps_the_library_call(task_id, call):
    task = make(task_id, 2, size="tiny", stage="epilogue")
    assert call in task.scaffold and "TODO" in task.scaffold
