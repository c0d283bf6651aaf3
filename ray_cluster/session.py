"""Connecting a driver to Ray: a cluster when there is one, else an embedded local instance.

Covers the one decision every entrypoint makes: inside `ray job submit` (RAY_ADDRESS is set) or with
an explicit address, connect to that cluster; otherwise start a private local instance sized for
this machine, without the dashboard and with a small object store (verification moves source text,
not tensors). `address="local"` always starts a new instance, which also sidesteps a stale
`ray_current_cluster` file left by an earlier `ray stop`. Does not create actors.
"""

from __future__ import annotations

import os

import ray

from kgym.farm.farm_config import RaySettings

__all__ = ["connect"]


def connect(settings: RaySettings = RaySettings()) -> bool:
    """Initialise Ray unless it already is; True when this call started it (the caller shuts it down)."""
    if ray.is_initialized():
        return False
    address = settings.address or os.environ.get("RAY_ADDRESS")
    if address and address != "local":
        ray.init(address=address, log_to_driver=False)
        return True
    ray.init(address="local", num_cpus=settings.num_cpus or os.cpu_count() or 1, num_gpus=settings.num_gpus,
             object_store_memory=settings.object_store_bytes, include_dashboard=settings.include_dashboard,
             log_to_driver=False)
    return True
