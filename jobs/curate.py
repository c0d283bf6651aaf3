"""The SFT curation job: a KernelBook-layout file -> verified chat dataset + funnel report.

    python -m jobs.curate --config jobs/configs/curate_sample.toml [--set farm.workers=4 --set records.run_id=x]
    python -m jobs.curate --help-config                          # every key, default and bound
    ray job submit --working-dir . --runtime-env-json '{"env_vars": {"KGYM_SUBMIT_DIR": "'$PWD'"}}' \
        -- python -m jobs.curate --config jobs/configs/curate_sample.toml

Runs `kgym.curation.curate` (the funnel's stages: kgym/curation/pipeline.py) with the verification
backend the config names: `farm` (default) runs `jobs.context.farm_job` (Ray: the cluster of `ray
job submit` or an embedded instance; a `RecordSink`; the farm) and streams the requests through it
(`jobs.stream`); `local` uses one Verifier in this process. Prints rich progress, then the funnel
table; writes CURATE.OUT/dataset.parquet, funnel.json, funnel.png. Resumable: re-running with the
same records.run_id verifies only what has no verdict in RECORDS.OUT/RUN_ID (and starts no Ray when
nothing is left). Exit status: 0 done, 1 when the farm gave up on some rows (re-run to retry them),
2 bad config or input.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jobs.job_cli import job_main, parser
from jobs.sections import (
    option,
    partial,
    section,
)
from kgym.contract import EvalRequest, Verdict
from kgym.curation import CurateConfig, CurationResult, Drop, LocalBackend, curate, recorded_verdicts, table
from kgym.curation.verification import OnResult
from kgym.farm.farm_config import PoolConfig, RaySettings, check_verify_table
from kgym.sink_config import MetricsConfig, RecordsConfig
from kgym.verify.config import VerifyConfig


@dataclass(frozen=True)
class CurateJobConfig:
    curate: CurateConfig = section(CurateConfig, "the funnel: kgym/curation/curate_config.py documents every key")
    backend: str = option("farm", "where verification runs: farm (Ray) or local (one Verifier in this process)",
                          choices=("farm", "local"))
    records: RecordsConfig = section(RecordsConfig, "where the verdicts go (the resume key is run_id)",
                                      run_id="curate", job_id="curate")
    farm: PoolConfig = section(PoolConfig, "the verifier workers (backend = farm)")
    verify: dict[str, Any] = partial(VerifyConfig, "the verifier's settings for every request; a key "
                                     "left out: the verifier's default")
    metrics: MetricsConfig = section(MetricsConfig, "the Prometheus exporter (backend = farm)")
    ray: RaySettings = section(RaySettings, "which Ray (backend = farm)")

    def __post_init__(self) -> None:
        check_verify_table(self.verify)


class FarmBackend:
    """Requests through the farm, rows into its `RecordSink` under RECORDS.OUT/RUN_ID. Ray, the sink
    and the farm start on the first `run` (none when everything is already recorded) and stay up for
    the next (the hybrid retry) until `close`."""

    def __init__(self, config: CurateJobConfig, log=print):
        from jobs.context import records_root

        self.config, self.log = config, log
        self.root = records_root(config.records.out)  # a relative path inside `ray job submit` is refused here
        self._context = self.job = None

    def recorded(self) -> dict[str, Verdict]:
        return recorded_verdicts(self.root, self.config.records.run_id)

    def run(self, requests: Sequence[EvalRequest], on_result: OnResult) -> None:
        from jobs.context import farm_job
        from jobs.stream import stream

        c = self.config
        if self.job is None:
            self._context = farm_job("jobs.curate", c.ray, c.records, c.metrics, c.farm, c.verify, self.log)
            self.job = self._context.__enter__()
            self.log(f"jobs.curate: {self.job.pool.num_workers} {'GPU' if self.job.gpu else 'CPU'} verifier worker(s)")
        stream(self.job.pool, self.job.sink, requests, on_result=lambda r: on_result(r.request, r.verdict))

    def close(self, exc: BaseException | None = None) -> None:
        if self._context is not None:
            context, self._context, self.job = self._context, None, None
            context.__exit__(type(exc) if exc else None, exc, exc.__traceback__ if exc else None)


class RichProgress:
    """`kgym.curation.pipeline.Progress` on a rich progress display: one bar per stage."""

    def __init__(self, progress: Any):
        self.progress, self.task = progress, None

    def stage(self, name: str, total: int | None = None) -> None:
        self.task = self.progress.add_task(name, total=total)

    def advance(self, n: int = 1) -> None:
        if self.task is not None and n:
            self.progress.advance(self.task, n)


def make_backend(config: CurateJobConfig, log=print):
    if config.backend == "farm":
        return FarmBackend(config, log=log)
    from jobs.context import records_root

    return LocalBackend(config.verify, records_root(config.records.out), config.records.run_id,
                        job_id=config.records.job_id, spares=config.farm.worker.spares or 1)


def run_curate_job(config: CurateJobConfig, log=print) -> CurationResult:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console()
    backend = make_backend(config, log=console.print)
    failure: BaseException | None = None
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console) as bar:
            result = curate(config.curate, backend, progress=RichProgress(bar))
    except BaseException as e:
        failure = e
        raise
    finally:
        if isinstance(backend, FarmBackend):
            backend.close(failure)
    console.print(table(result.report))
    log(f"jobs.curate: {len(result.rows)} rows in {result.dataset}; report {result.report_json}, plot {result.plot}")
    return result


def main(argv: list[str] | None = None) -> int:
    from kgym.tasks import TaskError

    return job_main(parser("curate", __doc__, "farm.workers=4"), CurateJobConfig, run_curate_job, argv,
                        errors=(TaskError, ValueError),  # ValueError: e.g. a replay path without records
                        finish=lambda result: 1 if result.report.drops.get(Drop.FARM_ERROR) else 0)


if __name__ == "__main__":
    sys.exit(main())
