"""The run every farm job shares: connect to Ray, start the record sink and the farm, shut them down.

    with farm_job("verify", cfg.ray, cfg.records, cfg.metrics, cfg.farm, cfg.verify, log) as job:
        report = stream(job.pool, job.sink, requests, on_result=...)
        summary = job.finish()                    # the sink flushed and closed: its SinkSummary

Covers resolving where the records go (`records_root`), connecting (`ray_cluster.connect`: the
cluster of `ray job submit`, or an embedded instance), starting the `RecordSink` and a
`VerifierPool` whose service streams every result to it, printing the absolute records location,
and on the way out (normally or not) stopping the farm, closing the sink and shutting down a Ray
this job started. Does not choose requests or print results (the job does).

Where relative record paths go: a driver run on this machine resolves them against its current
directory. Inside `ray job submit` the current directory is Ray's temporary copy of the working
directory (under the session dir, deleted with it), so a relative path is resolved against
$KGYM_SUBMIT_DIR when the submitter passed it (`--runtime-env-json '{"env_vars":
{"KGYM_SUBMIT_DIR": "'$PWD'"}}'`, for a head that shares this filesystem), and refused otherwise
with a message saying so; absolute paths and URIs (s3://...) are taken as they are.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jobs.preflight import check_writable
from jobs.sections import ConfigError
from kgym.farm.farm_config import PoolConfig, RaySettings
from kgym.sink_config import MetricsConfig, RecordsConfig, SinkConfig

SUBMIT_DIR_ENV = "KGYM_SUBMIT_DIR"
# Set by Ray's job supervisor for the entrypoint of `ray job submit` (ray/_private/runtime_env/constants.py).
SUBMITTED_JOB_ENV = "RAY_JOB_CONFIG_JSON_ENV_VAR"


def records_root(out: str, env: Mapping[str, str] | None = None, cwd: str | None = None) -> str:
    """`out` as an absolute path or a URI (rule in the module docstring)."""
    env = os.environ if env is None else env
    if "://" in out:
        return out
    p = Path(out).expanduser()
    if p.is_absolute():
        return str(p)
    if env.get(SUBMIT_DIR_ENV):
        return str(Path(env[SUBMIT_DIR_ENV]).expanduser() / p)
    if SUBMITTED_JOB_ENV in env:
        raise ConfigError(
            f"records.out {out!r} is a relative path, and this job runs under `ray job submit`, whose current "
            f"directory is Ray's temporary copy of the working directory ({cwd or os.getcwd()}): the records "
            f"would be deleted with it. Give an absolute path or a URI (--set records.out=/abs/path or "
            f"s3://bucket/prefix), or pass the submitting directory: ray job submit --runtime-env-json "
            f"'{{\"env_vars\": {{\"{SUBMIT_DIR_ENV}\": \"'$PWD'\"}}}}' ...")
    return str(Path(cwd or os.getcwd()) / p)


def farm_name(run_id: str) -> str:
    """The farm service's Ray actor name: the run's, plus a random part (a replaced service, or another
    run of the same id, never waits for a dead one's name): `ray.get_actor(name)` for operators."""
    return f"kgym-farm-{run_id}-{secrets.token_hex(3)}"


@dataclass
class FarmJob:
    pool: Any  # ray_cluster.VerifierPool, streaming its results to `sink`
    sink: Any  # ray_cluster.RecordSink handle
    records_root: str  # absolute path or URI
    run_location: str  # records_root/run_id
    metrics_endpoint: str | None
    gpu: bool  # the cluster has GPUs
    pool_config: PoolConfig | None = None  # what `pool` was started with (`restart_pool` starts the same)
    run_id: str = ""
    _summary: Any = None

    def restart_pool(self) -> None:
        """Replace a farm service that died or stopped answering with a fresh one of the same config,
        streaming to the same sink (rows already stored stay; evaluation ids keep a row each). Handles
        taken from the old pool (actors started with it) must be taken again."""
        from ray_cluster import VerifierPool

        old, self.pool = self.pool, None
        try:
            old.close()  # kills what is left of it (a wedged service too)
        except Exception:  # noqa: BLE001 - a dead service has nothing to close
            pass
        self.pool = VerifierPool(self.pool_config, sink=self.sink, name=farm_name(self.run_id))

    def finish(self) -> Any:
        """Wait for the farm's rows, flush and close the sink; its `SinkSummary` (once)."""
        import ray

        if self._summary is None:
            self.pool.drain()
            self._summary = ray.get(self.sink.close.remote())
        return self._summary


@contextmanager
def farm_job(job: str, ray_settings: RaySettings, records: RecordsConfig, metrics: MetricsConfig,
             farm: PoolConfig | Callable[[bool], PoolConfig], verify: Mapping[str, Any] | None,
             log: Callable[[str], None] = print, before_pool: Callable[[Any], None] | None = None) -> Iterator[FarmJob]:
    """Connect, start the sink and the pool, yield them; stop everything on the way out.
    `farm` may be a function of whether the cluster has GPUs (a job's defaults differ on CPU);
    `before_pool(sink)` runs once the sink is up, before any worker starts."""
    import ray

    from ray_cluster import RecordSink, VerifierPool, connect

    root = records_root(records.out)  # refused before Ray starts, as is a root that cannot be written
    check_writable(root, "records.out")
    started = connect(ray_settings)
    sink = pool = handle = None
    try:
        gpu = int(ray.cluster_resources().get("GPU", 0)) > 0
        pool_config = (farm(gpu) if callable(farm) else farm).with_verify(verify)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        # On the driver's node (the head under `ray job submit`): a GPU node the autoscaler removes
        # or loses must not take the run's buffered rows with it.
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        sink = RecordSink.options(scheduling_strategy=here).remote(
            SinkConfig(replace(records, out=root), metrics))  # the sink's process has another cwd: out resolved
        endpoint = ray.get(sink.metrics_endpoint.remote())  # also: the sink's constructor ran
        run_location = ray.get(sink.summary.remote()).run_path
        log(f"{job}: records in {run_location}" + (f"; metrics on http://{endpoint}/metrics" if endpoint else ""))
        if before_pool is not None:
            before_pool(sink)
        try:
            pool = VerifierPool(pool_config, sink=sink, name=farm_name(records.run_id))
        except ValueError as e:  # a farm this cluster cannot serve (GPUs asked for, none there)
            raise ConfigError(f"[farm]: {e}") from None
        handle = FarmJob(pool=pool, sink=sink, records_root=root, run_location=run_location,
                         metrics_endpoint=endpoint, gpu=gpu, pool_config=pool_config, run_id=records.run_id)
        log(f"{job}: farm service {pool.name} ({pool.num_workers} worker(s))")
        yield handle
        handle.finish()
    finally:
        if handle is not None:
            pool = handle.pool  # the job may have replaced it (`restart_pool`)
        if pool is not None:
            pool.close()
        if sink is not None:
            try:
                ray.get(sink.close.remote(), timeout=60)  # a second close is a no-op
            except Exception:  # noqa: BLE001 - a sink already gone has nothing to flush
                pass
        if started:
            ray.shutdown()
