"""Batch verification: rows of (task or reference, candidate) -> records Parquet + live metrics.

    python -m jobs.verify --config jobs/configs/example.toml [--set farm.workers=4 ...] [--run-id ID] [--workers N]
    python -m jobs.verify --help-config                       # every key, default and bound
    ray job submit --working-dir . --runtime-env-json '{"env_vars": {"KGYM_SUBMIT_DIR": "'$PWD'"}}' \
        -- python -m jobs.verify --config jobs/configs/example.toml

Reads the rows (`jobs/inputs.py`), then `jobs.context.farm_job` connects to Ray (the cluster of
`ray job submit`, or an embedded instance), starts a `RecordSink` and the farm, and every verdict is
streamed to Parquet under OUT/RUN_ID/ (a path or a URI; the absolute location is printed) and to the
sink's Prometheus exporter. Resumable: re-running with the same run id skips every evaluation id
that already has a verdict there, so a killed job restarted loses and duplicates nothing. Exit
status: 0 when every row got a verdict (pass or fail), 1 when the farm gave up on some (rows with
outcome "error", retried by the next run), 2 for a bad config or input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass

from jobs.inputs import InputError, load_requests
from jobs.job_cli import job_main, parser, toml_string
from jobs.stream import StreamReport, stream
from jobs.verify_config import VerifyJobConfig


@dataclass(frozen=True)
class VerifyJobResult:
    run_path: str
    report: StreamReport
    metrics_endpoint: str | None


def run_verify_job(config: VerifyJobConfig, log: Callable[[str], None] = print) -> VerifyJobResult:
    from jobs.context import farm_job

    requests = load_requests(config.input, default_size=config.size)
    with farm_job("jobs.verify", config.ray, config.records, config.metrics, config.farm, config.verify,
                  log) as job:
        log(f"jobs.verify: {len(requests)} rows, {job.pool.num_workers} {'GPU' if job.pool.gpu else 'CPU'} "
            f"worker(s), run {config.records.run_id}")
        done = [0]

        def on_result(r) -> None:
            done[0] += 1
            gate = r.verdict.gate or "-"
            log(f"[{done[0]}] {r.request.task['task_id']} {r.request.label or ''} {r.outcome} gate={gate} "
                f"worker={r.worker_id} attempts={r.attempts} id={r.evaluation_id}")

        report = stream(job.pool, job.sink, requests, on_result=on_result)
        summary = job.finish()
        log(f"jobs.verify: {report.results} verified, {report.skipped} already recorded, "
            f"{report.farm_errors} farm error(s), {report.pool.replaced} worker(s) replaced, "
            f"{report.wall_s:.1f} s; records in {summary.run_path}")
        return VerifyJobResult(run_path=summary.run_path, report=report, metrics_endpoint=job.metrics_endpoint)


def _shortcuts(args: argparse.Namespace) -> list[str]:
    return ([f"records.run_id={toml_string(args.run_id)}"] if args.run_id else []) + \
        ([f"farm.workers={args.workers}"] if args.workers else [])


def main(argv: list[str] | None = None) -> int:
    p = parser("verify", __doc__, "farm.workers=4")
    p.add_argument("--run-id", help="override the config's run id (records.run_id)")
    p.add_argument("--workers", type=int, help="override the number of workers (farm.workers)")
    return job_main(p, VerifyJobConfig, run_verify_job, argv, shortcuts=_shortcuts, errors=(InputError,),
                        finish=lambda result: 1 if result.report.farm_errors else 0)


if __name__ == "__main__":
    sys.exit(main())
