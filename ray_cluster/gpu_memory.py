"""One GPU's memory and what is in use, asked of the GPU itself by a short Ray task.

    mem = gpu_memory()      # kgym.training.device_memory.GpuMemory, or None: no GPU answered in time

The RL job's colocated placement needs it before any actor starts (to decide whether vLLM must
sleep while the learner steps, `jobs.rl_placement.decide_sleep`), and the driver may run where no
GPU is (a head node, `ray job submit`). The task takes one whole GPU, so it runs only while no actor
holds a share of one: before the farm starts, so what is in use then belongs to someone else. The
reading itself is `kgym.training.device_memory.read_memory_bytes`. Does not decide anything.
"""

from __future__ import annotations

import ray

from kgym.training.device_memory import GIB, GpuMemory, read_memory_bytes


def gpu_memory(timeout_s: float = 120.0) -> GpuMemory | None:
    """One GPU of the cluster: its memory and what is in use; None when none answered within `timeout_s`."""
    ref = ray.remote(num_gpus=1, num_cpus=0, max_retries=0)(read_memory_bytes).remote()
    try:
        got = ray.get(ref, timeout=timeout_s)
    except Exception:  # noqa: BLE001 - a timeout, no GPU, a failed task: unknown
        ray.cancel(ref, force=True)
        return None
    return None if got is None else GpuMemory(got[0] / GIB, got[1] / GIB)


__all__ = ["gpu_memory"]
