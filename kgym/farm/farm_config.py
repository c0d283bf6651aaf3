"""The farm's settings: `PoolConfig` (a job's `[farm]`), the `WorkerConfig` each verifier worker gets
(its keys sit in `[farm]` too), `RaySettings` (`[ray]`: which Ray), and the rules that join them to
the rest of a job: the `[verify]` table the workers get (`check_verify_table`, `farm_verify`) and where a
worker's verifier runs (`gpu_workers`, `WorkerConfig.resolved_device`).

Plain data: the farm's actors (`ray_cluster/`) read these, the jobs' configs are made of them
(`kgym.settings` loads them). Imports neither torch nor Ray. Does not start anything.

Where a verifier runs ("auto", three places, one chain): the farm decides once whether its workers
are GPU workers (`gpu_workers`: `use_gpus`, or whether the cluster has a GPU); Ray then gives each GPU
worker one GPU, and the worker's "auto" device is `cuda:0` exactly when Ray gave it one
(`WorkerConfig.resolved_device`); the verifier it builds is handed that device, never "auto" (a
`kgym.verify.VerifyConfig` left at "auto", outside the farm, asks torch whether CUDA is there).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kgym.settings import check_partial, internal, option, section

if TYPE_CHECKING:
    from kgym.reward import RewardConfig

# Spares kept ahead when WorkerConfig.spares is None. On a GPU each verification of a microsecond task
# takes ~1 s once a spare is ready and a spare's start ~7-8 s, so a worker's throughput is about
# spares / start time: on an H200 with 16 host cores, 29.5 candidates/min with 4 spares, 46.7 with 8
# (benchmarks/farm_throughput.py --spares 4,8). Each spare is a process that has imported torch and
# started a CUDA context. On the CPU one spare keeps up.
GPU_SPARES = 8
CPU_SPARES = 1


def default_spares(device: str) -> int:
    """Spares a worker keeps ahead on `device` ("cuda:N" or "cpu") when its config names none."""
    return GPU_SPARES if device.startswith("cuda") else CPU_SPARES


def _quiet_modes() -> tuple[str, ...]:
    from kgym.verify.parent.sandbox import Sandbox  # imports torch: only when a config names a quiet mode

    return tuple(Sandbox.QUIET_MODES)


@dataclass(frozen=True)
class WorkerConfig:
    """How each worker builds its verifier. Its settings are keys of a job's `[farm]`."""

    spares: int | None = option(None, "warm candidate processes per worker; omit: 8 on a GPU, 1 on the CPU "
                                "(default_spares)", ge=0, le=64)
    quiet_mode: str | None = option(None, "spares warming while a short kernel is timed (kgym.verify.parent.sandbox."
                                    "Sandbox.QUIET_MODES); omit: the sandbox's default (pause)",
                                    choices=_quiet_modes)
    zygote: bool | None = option(None, "spares forked from a zygote that has imported torch and Triton (false: each "
                                 "started cold, the old path; docs/spares.md); omit: the sandbox's default (forked)")
    cache_dir: str | None = option(None, "baseline cache on each worker; omit: $KGYM_CACHE_DIR or "
                                   "~/.cache/kgym/baselines")
    device: str = internal("auto", "auto: cuda:0 when Ray gave this actor a GPU, else cpu (resolved_device)")
    case_secret: bytes | None = internal(None, "one secret for the whole pool, so a retry sees the same cases "
                                         "(the farm service draws it)")
    verify: dict[str, Any] = internal(doc="kgym.verify.config.VerifyConfig settings: the job's [verify] table "
                                      "(the keys it gives)", factory=dict)
    max_consecutive_errors: int = internal(2, "kgym errors in a row after which the worker reports itself "
                                           "unhealthy")

    def resolved_device(self, has_gpu: bool) -> str:
        """The verifier's device; `has_gpu`: Ray gave this worker a GPU (`ray.get_gpu_ids()`)."""
        if self.device == "auto":
            return "cuda:0" if has_gpu else "cpu"
        return self.device

    def sandbox_options(self) -> dict[str, Any]:
        """quiet_mode and zygote where set; the sandbox's own defaults otherwise."""
        return {k: v for k, v in (("quiet_mode", self.quiet_mode), ("zygote", self.zygote)) if v is not None}


@dataclass(frozen=True)
class PoolConfig:
    """[farm]: the verifier workers and the service that feeds them. The worker count is elastic:
    the service follows the cluster and places one worker per GPU of every live, usable node, between
    `min_workers` and `max_workers`; while work queues it asks the autoscaler for more."""

    workers: int | None = option(None, "verifier workers; omit: one per GPU of the cluster, else one per CPU "
                                 "(the shorthand for min_workers = max_workers = workers)", ge=1)
    min_workers: int = option(0, "fewer workers than this: the farm asks the autoscaler for the missing GPUs and "
                              "keeps that request standing; 0: nothing is asked while the farm is idle",
                              ge=0, le=100_000)
    max_workers: int | None = option(None, "at most this many workers as nodes join; omit: one per GPU (per CPU "
                                     "slot without GPUs)", ge=1)
    use_gpus: bool | None = option(None, "workers on GPUs (one each); omit: when the cluster has GPUs (gpu_workers)")
    cpus_per_worker: float = option(1.0, "CPUs Ray reserves for each worker", gt=0)
    gpus_per_worker: float = option(1.0, "Ray GPU share of each GPU worker: 1 (a GPU each) or a fraction when it "
                                    "shares its GPU (the RL job's colocated mode sets its own)", gt=0, le=1)
    max_in_flight: int = option(2, "calls queued on one worker: one running, the rest ready to start", ge=1, le=64)
    max_attempts: int = option(3, "calls per evaluation before the farm gives up on it (farm failures only)",
                               ge=1, le=20)
    # Keep it above the verifier's `candidate_budget_s` (900 s by default) plus the parent's own work (references,
    # baselines): a candidate may use its whole budget, and past this deadline its verdict would become a farm error.
    call_timeout_s: float = option(1800.0, "a call running longer means the worker is wedged: replaced", gt=0)
    probe_interval_s: float = option(30.0, "health probe of each worker at least this often", gt=0)
    probe_timeout_s: float = option(60.0, "a probe unanswered this long: the worker is replaced", gt=0)
    start_timeout_s: float = option(600.0, "a new worker must be ready within this; queued work with no worker at "
                                    "all (every node gone or marked bad) is given up after it", gt=0)
    kept_results: int = option(100_000, "finished results the farm keeps to answer a resubmitted evaluation id "
                               "(least recently asked for dropped first, a few KB each; one dropped is verified "
                               "again, and the record sink keeps one row per id)", ge=1, le=10_000_000)
    worker: WorkerConfig = section(WorkerConfig, "each worker's verifier", inline=True)
    max_waiting: int = internal(10_000, "submit() calls the service actor runs at once (Ray's max_concurrency): "
                                "each waiting caller holds one until its verdict is back")
    tick_s: float = internal(0.5, "how often the service checks deadlines and pushes gauges")
    watch_interval_s: float = internal(2.0, "how often the service reads the cluster's nodes (ray.nodes())")
    autoscale: bool = internal(True, "ask the autoscaler for worker bundles while work queues (request_resources)")
    release_after_s: float = internal(10.0, "nothing queued or running this long: the autoscaler request is "
                                      "released")
    bad_node_failures: int = internal(3, "health failures (failed or unhealthy probes, a worker that could not "
                                      "start) of workers on one node before the node is marked bad and dropped")

    def __post_init__(self) -> None:
        def bad(name: str, value: object, want: str) -> ValueError:
            return ValueError(f"PoolConfig.{name}={value!r}: {want}")

        if self.workers is not None:
            if self.workers < 1:
                raise bad("workers", self.workers, "need at least 1 (or leave it unset: one per GPU)")
            if self.max_workers not in (None, self.workers) or self.min_workers not in (0, self.workers):
                raise bad("workers", self.workers, f"is the shorthand for min_workers = max_workers = workers; it "
                          f"contradicts min_workers={self.min_workers}, max_workers={self.max_workers}: set either "
                          f"workers or min_workers/max_workers")
        if not 0 < self.gpus_per_worker <= 1:
            raise bad("gpus_per_worker", self.gpus_per_worker, "need a share of one GPU in (0, 1]")
        if self.min_workers < 0:
            raise bad("min_workers", self.min_workers, "need 0 or more")
        if self.max_workers is not None:
            if self.max_workers < 1:
                raise bad("max_workers", self.max_workers, "need at least 1 (or leave it unset: one per GPU)")
            if self.min_workers > self.max_workers:
                raise bad("min_workers", self.min_workers, f"is more than max_workers={self.max_workers}: "
                          f"raise max_workers or lower min_workers")
        for name in ("max_in_flight", "max_attempts", "bad_node_failures", "max_waiting", "kept_results"):
            if getattr(self, name) < 1:
                raise bad(name, getattr(self, name), "need at least 1")
        for name in ("cpus_per_worker", "call_timeout_s", "probe_interval_s", "probe_timeout_s", "start_timeout_s",
                     "tick_s", "watch_interval_s"):
            if not getattr(self, name) > 0:
                raise bad(name, getattr(self, name), "need a positive number")
        if self.release_after_s < 0:
            raise bad("release_after_s", self.release_after_s, "need 0 or more seconds")

    @property
    def floor(self) -> int:
        """Workers the farm wants at least (asking the autoscaler for the missing GPUs)."""
        return self.workers if self.workers is not None else self.min_workers

    @property
    def ceiling(self) -> int | None:
        """Workers the farm starts at most (None: one per usable GPU or CPU slot)."""
        return self.workers if self.workers is not None else self.max_workers

    def with_verify(self, verify: Mapping[str, Any] | None) -> PoolConfig:
        """This farm with its workers verifying under the `[verify]` table `verify`."""
        return replace(self, worker=replace(self.worker, verify=dict(verify or {})))


@dataclass(frozen=True)
class RaySettings:
    """[ray]: which Ray a job's driver connects to (`ray_cluster.connect`)."""

    address: str | None = option(None, "omit: $RAY_ADDRESS (set by `ray job submit`), else a new local instance; "
                                 "\"local\": always a new local instance")
    num_cpus: int | None = option(None, "CPUs of a local instance; omit: this machine's", ge=1)
    num_gpus: int | None = option(None, "GPUs of a local instance; omit: what Ray detects", ge=0)
    object_store_bytes: int = internal(200 * 2**20, "a local instance's object store (verification moves source "
                                       "text, not tensors)")
    include_dashboard: bool = internal(False, "a local instance's dashboard")


def gpu_workers(use_gpus: bool | None, cluster_has_gpu: bool) -> bool:
    """GPU workers or CPU workers (`PoolConfig.use_gpus`), decided once when the farm starts."""
    if use_gpus and not cluster_has_gpu:
        raise ValueError("GPU workers asked for (use_gpus=true), but no live node of the Ray cluster has a GPU: "
                         "start the cluster with at least one GPU node (the configs in ray_cluster/configs keep "
                         "one), or set use_gpus=false for CPU workers")
    return cluster_has_gpu if use_gpus is None else use_gpus


def check_verify_table(verify: Mapping[str, Any], where: str = "verify") -> None:
    """`[verify]` holds `kgym.verify.config.VerifyConfig` settings (device excluded: the worker picks it),
    checked as the loader checks them (`kgym.settings.check_partial`), for a config built in code; only
    the keys given are handed on (they are part of some requests' evaluation ids)."""
    from kgym.verify.config import VerifyConfig

    check_partial(VerifyConfig, verify, where)


def farm_verify(verify: Mapping[str, Any], reward: RewardConfig, baselines_off_path: bool) -> dict[str, Any]:
    """The `[verify]` table a farm whose verdicts are scored under `reward` gets. With the baselines
    measured off the verdict's path (prefetched while workers idle) and a reward that never reads the
    torch.compile figure, no verdict waits for that figure: `defer_compile` unless the table sets it
    (the workers measure it when idle, and it joins the records for the compile analysis)."""
    out = dict(verify)
    if baselines_off_path and not reward.reads_compile:
        out.setdefault("defer_compile", True)
    return out
