"""Who verified: the worker fields of a record and a farm reply (host, GPU model, versions).

Covers describing the current process as a `WorkerInfo`. Does not manage workers or their state
(the farm does; their count by state is a metric in `kgym.metrics`).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class WorkerInfo:
    worker_id: str | None = None
    host: str | None = None
    gpu_name: str | None = None
    torch_version: str | None = None
    triton_version: str | None = None

    @classmethod
    def here(cls, device: str = "cpu", worker_id: str | None = None) -> WorkerInfo:
        """This process: hostname, versions, and the GPU's name when `device` is a CUDA device."""
        import torch

        try:
            import triton

            triton_version = triton.__version__
        except ImportError:  # a CPU-only writer process need not have Triton
            triton_version = None
        gpu = None
        if device.startswith("cuda") and torch.cuda.is_available():
            gpu = torch.cuda.get_device_name(torch.device(device))
        return cls(worker_id=worker_id, host=socket.gethostname(), gpu_name=gpu,
                   torch_version=torch.__version__, triton_version=triton_version)
