"""Batch verification: rows of (task or reference, candidate) -> records Parquet + live metrics.

    python -m jobs.verify --config jobs/configs/example.toml [--run-id ID] [--workers N]
    ray job submit --working-dir . -- python -m jobs.verify --config jobs/configs/example.toml

Reads the rows (`jobs/inputs.py`), connects to Ray (the cluster of `ray job submit`, or an embedded
instance), starts a `RecordSink` and a `VerifierPool`, and streams every verdict to Parquet under
OUT/RUN_ID/ and to the sink's Prometheus exporter. Resumable: re-running with the same run id skips
every evaluation id that already has a verdict there, so a killed job restarted loses and duplicates
nothing. Exit status: 0 when every row got a verdict (pass or fail), 1 when the farm gave up on some
(rows with outcome "error", retried by the next run), 2 for a bad config or input.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from typing import Callable

from jobs.inputs import InputError, load_requests
from jobs.stream import StreamReport, stream
from jobs.verify_config import ConfigError, VerifyJobConfig, load_config


@dataclass(frozen=True)
class VerifyJobResult:
    run_path: str
    report: StreamReport
    metrics_endpoint: str | None


def run_verify_job(config: VerifyJobConfig, log: Callable[[str], None] = print) -> VerifyJobResult:
    import ray

    from ray_cluster import PoolConfig, RaySettings, RecordSink, SinkConfig, VerifierPool, WorkerConfig, connect

    requests = load_requests(config.input, default_size=config.size)
    started = connect(RaySettings(address=config.ray_address, num_cpus=config.ray_num_cpus))
    sink = pool = None
    try:
        sink = RecordSink.remote(SinkConfig(root=config.out, run_id=config.run_id, job_id=config.job_id,
                                            metrics_port=config.metrics_port, targets_file=config.targets_file))
        endpoint = ray.get(sink.metrics_endpoint.remote())
        if endpoint:
            log(f"jobs.verify: metrics on http://{endpoint}/metrics")
        pool = VerifierPool(PoolConfig(workers=config.workers, max_in_flight=config.max_in_flight,
                                       max_attempts=config.max_attempts, call_timeout_s=config.call_timeout_s,
                                       worker=WorkerConfig(spares=config.spares, quiet_mode=config.quiet_mode,
                                                           verify=dict(config.verify))))
        log(f"jobs.verify: {len(requests)} rows, {pool.num_workers} {'GPU' if pool.gpu else 'CPU'} worker(s), "
            f"run {config.run_id}")
        done = [0]

        def on_result(r) -> None:
            done[0] += 1
            gate = r.verdict.gate or "-"
            log(f"[{done[0]}] {r.request.task['task_id']} {r.request.label or ''} {r.outcome} gate={gate} "
                f"worker={r.worker_id} attempts={r.attempts} id={r.evaluation_id}")

        report = stream(pool, sink, requests, on_result=on_result)
        summary = ray.get(sink.close.remote())
        log(f"jobs.verify: {report.results} verified, {report.skipped} already recorded, "
            f"{report.farm_errors} farm error(s), {report.pool.replaced} worker(s) replaced, "
            f"{report.wall_s:.1f} s; records in {summary.run_path}")
        return VerifyJobResult(run_path=summary.run_path, report=report, metrics_endpoint=endpoint)
    finally:
        if pool is not None:
            pool.close()
        if started:
            ray.shutdown()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m jobs.verify", description=__doc__.splitlines()[0])
    p.add_argument("--config", required=True, help="TOML job config (see jobs/verify_config.py)")
    p.add_argument("--run-id", help="override the config's run id")
    p.add_argument("--workers", type=int, help="override the number of workers")
    args = p.parse_args(argv)
    try:
        config = load_config(args.config)
        if args.run_id:
            config = replace(config, run_id=args.run_id)
        if args.workers:
            config = replace(config, workers=args.workers)
        result = run_verify_job(config, log=lambda s: print(s, flush=True))
    except (ConfigError, InputError) as e:
        print(f"jobs.verify: error: {e}", file=sys.stderr)
        return 2
    return 1 if result.report.farm_errors else 0


if __name__ == "__main__":
    sys.exit(main())
