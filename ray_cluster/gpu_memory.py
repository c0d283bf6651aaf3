"""How much memory one of the cluster's GPUs has, asked of the GPU itself by a short Ray task.

    gib = total_gpu_memory_gib()      # None: no GPU answered in time (the caller assumes the worst)

The RL job's colocated placement needs it before any actor starts (to decide whether vLLM must
sleep while the learner steps, `jobs.rl_placement.decide_sleep`), and the driver may run where no
GPU is (a head node, `ray job submit`). The task takes one whole GPU, so it runs only while no actor
holds a share of one: before the farm starts. `nvidia-smi` answers in milliseconds; torch is the
fallback (a few seconds to import). Does not decide anything.
"""

from __future__ import annotations

import os
import subprocess

import ray

GIB = 2**30


@ray.remote(num_gpus=1, num_cpus=0, max_retries=0)
def _total_bytes() -> int | None:
    device = (os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0]
    try:
        out = subprocess.run(["nvidia-smi", "-i", device, "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            return int(float(out.stdout.strip().splitlines()[0])) * 2**20  # MiB
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    try:
        import torch

        return int(torch.cuda.get_device_properties(0).total_memory) if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001 - no answer is an answer: unknown
        return None


def total_gpu_memory_gib(timeout_s: float = 120.0) -> float | None:
    """GiB of memory of one GPU of the cluster; None when none answered within `timeout_s`."""
    ref = _total_bytes.remote()
    try:
        got = ray.get(ref, timeout=timeout_s)
    except Exception:  # noqa: BLE001 - a timeout, no GPU, a failed task: unknown
        ray.cancel(ref, force=True)
        return None
    return None if got is None else got / GIB


__all__ = ["total_gpu_memory_gib"]
