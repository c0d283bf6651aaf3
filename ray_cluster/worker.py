"""`VerifierWorker`: the Ray actor that owns one device's verifier, and its health probe.

One worker per GPU (`num_gpus=1`: Ray sets CUDA_VISIBLE_DEVICES, so the worker's device is always
`cuda:0` inside it), or one per CPU slot where the cluster has no GPU. The worker owns a
`kgym.verify.Verifier`: the sandbox of warm candidate processes, the baseline cache and the secret the
hidden cases are drawn from. `verify()` turns a request into a `WorkerReply` (the verdict, who verified it, when);
everything a candidate does is a verdict there, and only a failure of kgym itself sets its `error`.
`health()` runs in its own concurrency group, so it answers while a verification is running: it
checks that the device still computes right and that the sandbox is usable. `prefetch()` queues the
baselines of upcoming tasks, which the worker's `Prefetcher` (`kgym.farm.baseline_prefetch`) measures while no
verification runs on its GPU, with the torch.compile figures verdicts deferred; their rows go to the
run's RecordSink when the worker has one. Does not schedule, retry or replace anything (`pool.py`),
and does not write records itself (`sink.py`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import ray

from kgym.contract import EvalRequest, WorkerReply
from kgym.farm.farm_config import WorkerConfig, default_spares

_PROBE_N = 4099  # an awkward length: a device that drops a tail or a tile gets the sum wrong

__all__ = ["VerifierWorker", "WorkerHealth"]


@dataclass(frozen=True)
class WorkerHealth:
    worker_id: str
    ok: bool
    problems: list[str]
    device: str
    host: str
    pid: int
    evaluations: int
    consecutive_errors: int
    busy_s: float | None  # seconds the current verification has run, None when idle
    probe_ms: float


@ray.remote(concurrency_groups={"health": 1, "prefetch": 1}, max_restarts=0, max_task_retries=0)
class VerifierWorker:
    def __init__(self, worker_id: str, config: WorkerConfig = WorkerConfig(), sink: Any = None):
        import torch  # noqa: F401 - the actor pays the import, not the first verification

        from kgym.contract import WorkerInfo
        from kgym.verify import Verifier, VerifyConfig

        self.worker_id = worker_id
        self.config = config
        device = config.resolved_device(bool(ray.get_gpu_ids()))
        spares = config.spares if config.spares is not None else default_spares(device)
        self.verifier = Verifier(VerifyConfig(device=device, **config.verify), spares=spares,
                                 cache_dir=config.cache_dir, case_secret=config.case_secret,
                                 **config.sandbox_options())
        self.info = WorkerInfo.here(str(self.verifier.device), worker_id)
        self.evaluations = 0
        self.consecutive_errors = 0
        self._busy_since: float | None = None
        from kgym.farm.baseline_prefetch import Prefetcher

        emit = None if sink is None else (lambda rows: ray.get(sink.write_baselines.remote(rows), timeout=120))
        self.prefetcher = Prefetcher(self.verifier, self.info, emit)

    def ready(self) -> WorkerHealth:
        """Returns once the constructor has run (the pool waits on it), with a first probe."""
        return self._probe()

    def verify(self, request: EvalRequest) -> WorkerReply:
        t0 = time.perf_counter()
        self._busy_since = time.monotonic()
        started = time.time()
        try:
            with self.prefetcher.verifying():  # no baseline measurement runs on this GPU meanwhile
                verdict = self.verifier.verify(request.reference, request.candidate, seed=request.seed,
                                               **dict(request.overrides))
        finally:
            self._busy_since = None
        self.prefetcher.after_verdict(request, verdict)
        verify_s = time.perf_counter() - t0
        self.evaluations += 1
        self.consecutive_errors = self.consecutive_errors + 1 if verdict.error is not None else 0
        return WorkerReply(evaluation_id=request.evaluation_id, verdict=verdict, worker=self.info,
                           verify_s=verify_s, started_at=started, finished_at=time.time())

    @ray.method(concurrency_group="prefetch")
    def prefetch(self, items: list[Any]) -> int:
        """Queue the baselines of upcoming verifications (`BaselineRequest`s or `EvalRequest`s);
        returns how many were new. They are measured while this worker is idle."""
        return self.prefetcher.offer(list(items))

    @ray.method(concurrency_group="prefetch")
    def baseline_stats(self) -> Any:
        """The prefetcher's counters (`kgym.farm.baseline_prefetch.PrefetchStats`)."""
        import dataclasses

        return dataclasses.replace(self.prefetcher.stats, failed=list(self.prefetcher.stats.failed),
                                   emit_errors=list(self.prefetcher.stats.emit_errors))

    @ray.method(concurrency_group="prefetch")
    def settle_baselines(self, timeout_s: float = 600.0) -> bool:
        """Wait until every queued baseline is measured and its rows sent (False on timeout)."""
        return self.prefetcher.settle(timeout_s)

    @ray.method(concurrency_group="health")
    def health(self) -> WorkerHealth:
        return self._probe()

    def _probe(self) -> WorkerHealth:
        import torch

        t0 = time.perf_counter()
        problems: list[str] = []
        device = getattr(self.verifier, "device", None)
        try:
            # The device must compute, and compute right: a poisoned CUDA context raises here, a
            # device in a bad state (or a verifier pointed at the wrong one) returns a wrong sum.
            x = torch.arange(1, _PROBE_N + 1, dtype=torch.float64, device=device)
            got = float((x * 2.0).sum().item())
            want = float(_PROBE_N * (_PROBE_N + 1))
            if got != want:
                problems.append(f"device {device} computed {got} for {want}")
            if isinstance(device, torch.device) and device.type == "cuda":
                torch.cuda.synchronize(device)
        except Exception as e:  # noqa: BLE001 - any failure of the device is a finding, not a crash
            problems.append(f"device {device} failed the probe: {type(e).__name__}: {str(e)[:300]}")
        sandbox = getattr(self.verifier, "sandbox", None)
        if sandbox is None or not hasattr(sandbox, "acquire"):
            problems.append("the verifier has no usable sandbox")
        if self.consecutive_errors >= self.config.max_consecutive_errors:
            problems.append(f"{self.consecutive_errors} kgym errors in a row")
        busy = None if self._busy_since is None else time.monotonic() - self._busy_since
        return WorkerHealth(worker_id=self.worker_id, ok=not problems, problems=problems, device=str(device),
                            host=self.info.host or "", pid=os.getpid(), evaluations=self.evaluations,
                            consecutive_errors=self.consecutive_errors, busy_s=busy,
                            probe_ms=(time.perf_counter() - t0) * 1e3)

    def close(self) -> None:
        self.prefetcher.close()
        self.verifier.close()
