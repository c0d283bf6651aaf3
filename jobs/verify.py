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

from jobs.config import ConfigError, describe
from jobs.inputs import InputError, load_requests
from jobs.stream import StreamReport, stream
from jobs.verify_config import VerifyJobConfig, load_config


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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m jobs.verify", description=__doc__.splitlines()[0])
    p.add_argument("--config", help="TOML job config (every key: --help-config)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                   help="override a config key, e.g. farm.workers=4 (value: a TOML literal; repeatable)")
    p.add_argument("--run-id", help="override the config's run id (records.run_id)")
    p.add_argument("--workers", type=int, help="override the number of workers (farm.workers)")
    p.add_argument("--help-config", action="store_true", help="print every config key with its default and exit")
    args = p.parse_args(argv)
    if args.help_config:
        print(describe(VerifyJobConfig))
        return 0
    overrides = list(args.overrides)
    if args.run_id:
        overrides.append(f'records.run_id="{args.run_id}"')
    if args.workers:
        overrides.append(f"farm.workers={args.workers}")
    try:
        config = load_config(args.config, overrides)
        result = run_verify_job(config, log=lambda s: print(s, flush=True))
    except (ConfigError, InputError) as e:
        print(f"jobs.verify: error: {e}", file=sys.stderr)
        return 2
    return 1 if result.report.farm_errors else 0


if __name__ == "__main__":
    sys.exit(main())
