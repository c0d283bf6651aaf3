"""The SFT curation job: a KernelBook-layout file -> verified chat dataset + funnel report.

    python -m jobs.curate --config jobs/configs/curate_sample.toml [--set farm.workers=4 --set run_id=x]
    ray job submit --working-dir . -- python -m jobs.curate --config jobs/configs/curate_sample.toml

Runs `kgym.curation.curate` (the funnel's stages: see kgym/curation/pipeline.py) with the
verification backend the config names: `farm` (default) connects to Ray (the cluster of `ray job
submit`, or an embedded instance), starts a `RecordSink` and a `VerifierPool` and streams the
requests through them (`jobs.stream`); `local` uses one Verifier in this process. Prints rich
progress, then the funnel table; writes OUT/dataset.parquet, OUT/funnel.json, OUT/funnel.png.
Resumable: re-running with the same run id verifies only what has no verdict in RECORDS/RUN_ID.
Exit status: 0 done, 1 when the farm gave up on some rows (re-run to retry them), 2 bad config/input.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Sequence

from kgym.contract import EvalRequest
from kgym.curation import CurateConfig, CurationResult, Drop, LocalBackend, curate, table
from kgym.curation.toml_config import ConfigError, load
from kgym.curation.verification import OnResult


class FarmBackend:
    """Requests through a Ray `VerifierPool`, rows into a `RecordSink` under RECORDS/RUN_ID. Ray, the
    sink and the pool start on the first `run` and stay up for the next (the hybrid retry) until `close`."""

    def __init__(self, config: CurateConfig, log=print):
        self.config, self.log = config, log
        self._started = False
        self.sink = self.pool = None

    def _start(self) -> None:
        import ray

        from ray_cluster import PoolConfig, RaySettings, RecordSink, SinkConfig, VerifierPool, WorkerConfig, connect

        f = self.config.farm
        # A worker picks its own device (cuda:0 when Ray gave it a GPU, else cpu): not the config's.
        verify = {k: v for k, v in self.config.verify.items() if k != "device"}
        self._started = connect(RaySettings(address=f.ray_address, num_cpus=f.ray_num_cpus))
        self.sink = RecordSink.remote(SinkConfig(root=self.config.records, run_id=self.config.run_id, job_id="curate",
                                                 metrics_port=f.metrics_port))
        endpoint = ray.get(self.sink.metrics_endpoint.remote())
        if endpoint:
            self.log(f"jobs.curate: metrics on http://{endpoint}/metrics")
        self.pool = VerifierPool(PoolConfig(workers=f.workers, max_in_flight=f.max_in_flight,
                                            max_attempts=f.max_attempts, call_timeout_s=f.call_timeout_s,
                                            worker=WorkerConfig(spares=f.spares, verify=verify)))
        self.log(f"jobs.curate: {self.pool.num_workers} {'GPU' if self.pool.gpu else 'CPU'} verifier worker(s)")

    def run(self, requests: Sequence[EvalRequest], on_result: OnResult) -> None:
        from jobs.stream import stream

        if self.pool is None:
            self._start()
        stream(self.pool, self.sink, requests, on_result=lambda r: on_result(r.request, r.verdict))

    def close(self) -> None:
        import ray

        try:
            if self.sink is not None:
                ray.get(self.sink.close.remote())
            if self.pool is not None:
                self.pool.close()
        finally:
            if self._started:
                ray.shutdown()


class RichProgress:
    """`kgym.curation.pipeline.Progress` on a rich progress display: one bar per stage."""

    def __init__(self, progress: Any):
        self.progress, self.task = progress, None

    def stage(self, name: str, total: int | None = None) -> None:
        if self.task is not None:
            self.progress.update(self.task, completed=self.progress.tasks[-1].total or 0)
        self.task = self.progress.add_task(name, total=total)

    def advance(self, n: int = 1) -> None:
        if self.task is not None and n:
            self.progress.advance(self.task, n)


def run_curate_job(config: CurateConfig, log=print) -> CurationResult:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console()
    backend = FarmBackend(config, log=console.print) if config.farm.backend == "farm" else \
        LocalBackend(config.verify, config.records, config.run_id)
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console) as bar:
            result = curate(config, backend, progress=RichProgress(bar))
    finally:
        if isinstance(backend, FarmBackend):
            backend.close()
    console.print(table(result.report))
    log(f"jobs.curate: {len(result.rows)} rows in {result.dataset}; report {result.report_json}, plot {result.plot}")
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m jobs.curate", description=__doc__.splitlines()[0])
    p.add_argument("--config", required=True, help="TOML job config (fields: kgym/curation/config.py)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config field, dotted for tables (farm.workers=4); repeatable")
    args = p.parse_args(argv)
    from kgym.tasks import TaskError

    try:
        config = load(CurateConfig, args.config, args.set)
        result = run_curate_job(config, log=lambda s: print(s, flush=True))
    except (ConfigError, TaskError, ValueError) as e:  # ValueError: a replay path without records
        print(f"jobs.curate: error: {e}", file=sys.stderr)
        return 2
    return 1 if result.report.drops.get(Drop.FARM_ERROR) else 0


if __name__ == "__main__":
    sys.exit(main())
