"""How much memory one of the cluster's GPUs has, and how much of it other processes already hold,
asked of the GPU itself by a short Ray task.

    mem = gpu_memory()      # GpuMemory(total_gib, in_use_gib), or None: no GPU answered in time
    mem.free_gib            # what the job's engine, learner and verifier worker can share

The RL job's colocated placement needs it before any actor starts (to decide whether vLLM must
sleep while the learner steps, `jobs.rl_placement.decide_sleep`), and the driver may run where no
GPU is (a head node, `ray job submit`). The task takes one whole GPU, so it runs only while no actor
holds a share of one: before the farm starts, so what is in use then belongs to someone else (another
job, a notebook, a process that built a model on the GPU and kept its cache: issue 28's first 7B run
overlapped on an H100 ran its learner out of memory that way). `nvidia-smi` answers in milliseconds;
torch is the fallback (a few seconds to import). Does not decide anything.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

GIB = 2**30


@dataclass(frozen=True)
class GpuMemory:
    """One GPU's memory in GiB: all of it, and what other processes held when it was asked."""

    total_gib: float
    in_use_gib: float = 0.0

    @property
    def free_gib(self) -> float:
        return max(0.0, self.total_gib - self.in_use_gib)


def _nvidia_smi(device: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run(["nvidia-smi", "-i", device, "--query-gpu=memory.total,memory.used",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    try:
        total, used = (int(float(v)) * 2**20 for v in out.stdout.strip().splitlines()[0].split(","))  # MiB
    except (ValueError, IndexError):
        return None
    return (total, used) if out.returncode == 0 else None


def _memory_bytes() -> tuple[int, int] | None:
    """(total, in use) bytes of the GPU this process sees first (run as a Ray task that holds one)."""
    got = _nvidia_smi((os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0])
    if got is not None:
        return got
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        free, total = torch.cuda.mem_get_info(0)  # counts this task's own CUDA context as in use
        return int(total), int(total - free)
    except Exception:  # noqa: BLE001 - no answer is an answer: unknown
        return None


def gpu_memory(timeout_s: float = 120.0) -> GpuMemory | None:
    """One GPU of the cluster: its memory and what is in use; None when none answered within `timeout_s`."""
    import ray

    ref = ray.remote(num_gpus=1, num_cpus=0, max_retries=0)(_memory_bytes).remote()
    try:
        got = ray.get(ref, timeout=timeout_s)
    except Exception:  # noqa: BLE001 - a timeout, no GPU, a failed task: unknown
        ray.cancel(ref, force=True)
        return None
    return None if got is None else GpuMemory(got[0] / GIB, got[1] / GIB)


__all__ = ["GpuMemory", "gpu_memory"]
