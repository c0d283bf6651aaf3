"""One GPU's memory and what other processes already hold of it, read on the machine that has the GPU.

    GpuMemory(total_gib=79.6, in_use_gib=30.1).free_gib     # what a job can still share
    read_memory_bytes()                                      # (total, in use) of the first visible GPU

The RL job's colocated placement (`jobs.rl_placement.decide_sleep`) fits the engine, the learner and
the verifier worker into what is free when the job starts: memory other processes hold then (another
job, a notebook, a process that built a model on the GPU and kept its cache: issue 28's first
overlapped 7B run on an H100 ran its learner out of memory that way) is not the job's. `nvidia-smi`
answers in milliseconds; torch is the fallback. No Ray here: `ray_cluster/gpu_memory.py` runs
`read_memory_bytes` as a one-GPU Ray task where the driver has no GPU of its own.
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


def read_memory_bytes() -> tuple[int, int] | None:
    """(total, in use) bytes of the GPU this process sees first; None where there is none."""
    got = _nvidia_smi((os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0])
    if got is not None:
        return got
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        free, total = torch.cuda.mem_get_info(0)  # counts this process's own CUDA context as in use
        return int(total), int(total - free)
    except Exception:  # noqa: BLE001 - no answer is an answer: unknown
        return None


__all__ = ["GpuMemory", "read_memory_bytes"]
