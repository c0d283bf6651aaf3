"""The main job, `kgym demo`: every family's reference solution, known-wrong answer and a few exploits
through the Ray farm, streamed to Parquet and Prometheus, with a progress bar and closing tables.

    kgym demo [--out DIR] [--workers N] [--size tiny|small|full] [--metrics-port N] [--config F] [--set K=V]
    python -m jobs.demo [same options]

Through `jobs.context.farm_job`: an embedded Ray (or the cluster of `ray job submit`), a
`RecordSink` (Parquet under OUT/RUN_ID/, a path or a URI; Prometheus exporter, file_sd target under
/tmp/kgym/prometheus/) and the farm (one worker per GPU; on a CPU-only machine one per core, tasks
at the tiny size, 2 spares per worker); then a `TaskActor` draws one task per family at its
curriculum rung. The flags are shorthands for `DemoConfig` keys (`--out` is `records.out`), which a
TOML config and `--set` give in full. Each verdict is reported back to the curriculum.
Exit status 0 when every answer got the verdict it should (solutions pass, wrong answers and
exploits are rejected, exploits at their expected gate), 1 otherwise.

The demo's rows are scored against eager PyTorch (the sink's default `RewardConfig`), so with
`compile_baselines = "defer"` no verdict waits for a torch.compile baseline: the farm is told the
tasks ahead (`VerifierPool.prefetch`) and measures the compile figures when its workers are idle,
and those measured join the records (docs/farm.md, "Baselines off the candidate's path"). "finish"
also waits for all of them before the demo ends; "wait" is the old path (a task's first verdict
waits for its compile baseline). "defer" is the default: on an H200 with an empty cache the demo's
33 verdicts took 78.7 s with it, against 343.7 s waiting (2026-12-03, docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from jobs.demo_report import Expectation, exploit_table, family_table, unmet
from jobs.sections import (
    ConfigError,
    load_job_config,
    option,
    section,
)
from kgym.farm.farm_config import PoolConfig, RaySettings
from kgym.sink_config import MetricsConfig, RecordsConfig

ANSWERS = Path(__file__).parent / "demo_answers"
# The gate each hostile answer must be rejected at.
EXPLOITS = {"torch_fallback": "isolation", "infinite_loop": "timeout", "exit_process": "policy",
            "hardcoded_output": "launch", "huge_allocation": "crash"}
CPU_VERIFY = {"timed_runs": 5, "warmup_runs": 1, "max_remeasure": 1}  # the interpreter is slow; speed is not the point
EXPLOIT_TIMEOUT_S = 8.0  # per request to a hostile candidate (the infinite loop costs one worker this long)
FINISH_BASELINES_S = 1800.0  # compile_baselines = "finish": the longest the demo waits for them


CPU_SPARES = 2  # spares per CPU worker unless farm.spares says otherwise (one is not enough for the demo's mix)


@dataclass(frozen=True)
class DemoConfig:
    """run_id "" (the default): a timestamp, so each demo is a fresh run."""

    size: str | None = option(None, "task size; omit: full with GPUs, tiny without", choices=("tiny", "small", "full"))
    seed: int = option(0, "curriculum seed", ge=0)
    per_family: int = option(1, "tasks drawn per family", ge=1, le=100)
    exploits: bool = option(True, "also send the hostile answers")
    compile_baselines: str = option("defer", "torch.compile baselines: defer (no verdict waits; measured while "
                                    "workers idle), finish (defer, then wait for them all before the end), "
                                    "wait (each task's first verdict waits, the old path)",
                                    choices=("defer", "finish", "wait"))
    records: RecordsConfig = section(RecordsConfig, "where the rows go", out="out/demo", run_id="", job_id="demo")
    farm: PoolConfig = section(PoolConfig, "the verifier workers")
    metrics: MetricsConfig = section(MetricsConfig, "the Prometheus exporter", port=0)
    ray: RaySettings = section(RaySettings, "which Ray")


@dataclass(frozen=True)
class DemoSummary:
    run_path: str
    evaluations: int
    farm_errors: int
    unmet: list[str]
    skipped_families: list[str]
    workers: int
    gpu: bool
    wall_s: float
    metrics_endpoint: str | None


def build_requests(task_actor, families: list[str], config: DemoConfig, size: str, gpu: bool):
    """(requests, expectations by id, families that could not be drawn)."""
    import ray

    from kgym.contract import EvalRequest
    from kgym.tasks import make

    requests, expect, skipped = [], {}, []
    verify = {} if gpu else dict(CPU_VERIFY)
    if config.compile_baselines != "wait":
        verify["defer_compile"] = True  # the rows are scored vs eager: no verdict waits for torch.compile
    drawn = [task_actor.sample_family.remote(f, config.per_family) for f in families]
    for family, ref in zip(families, drawn):
        try:
            tasks = ray.get(ref)
        except Exception as e:  # noqa: BLE001 - a family that cannot be made is reported, not fatal
            skipped.append(f"{family}: {str(e).splitlines()[-1][:200]}")
            continue
        for task in tasks:
            kinds = [("solution", task.solution)] + ([("wrong", task.wrong)] if task.wrong else [])
            for kind, source in kinds:
                req = EvalRequest.for_task(task, source, label=kind, **verify)
                requests.append(req)
                expect[req.evaluation_id] = Expectation(kind, task.task_id)
    if config.exploits:
        relu = make("relu-v1", config.seed, size=size)
        for name, gate in EXPLOITS.items():
            source = (ANSWERS / f"{name}.py").read_text()
            req = EvalRequest.for_task(relu, source, label=f"exploit:{name}", timeout_s=EXPLOIT_TIMEOUT_S,
                                       **verify)
            requests.append(req)
            expect[req.evaluation_id] = Expectation("exploit", name, gate)
    # Interleave families so every worker sees a mix, and the slow hostile ones start early.
    exploits = [r for r in requests if r.label.startswith("exploit:")]
    rest = [r for r in requests if not r.label.startswith("exploit:")]
    return exploits[:1] + rest[:len(rest) // 2] + exploits[1:] + rest[len(rest) // 2:], expect, skipped


def run_demo(config: DemoConfig, console=None) -> DemoSummary:
    import ray
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from jobs.context import farm_job
    from jobs.stream import stream
    from kgym.tasks.curriculum import CurriculumConfig
    from ray_cluster import TaskActor

    console = console or Console()
    t0 = time.perf_counter()
    run_id = config.records.run_id or time.strftime("demo-%Y%m%d-%H%M%S")
    records = replace(config.records, run_id=run_id)
    metrics = config.metrics
    if metrics.port is not None and metrics.targets_file is None:
        metrics = replace(metrics, targets_file=f"/tmp/kgym/prometheus/{run_id}.json")

    def farm_for(gpu: bool) -> PoolConfig:
        worker = config.farm.worker
        if gpu or worker.spares is not None:
            return config.farm
        return replace(config.farm, worker=replace(worker, spares=CPU_SPARES))

    with farm_job("kgym demo", config.ray, records, metrics, farm_for, None, console.print) as job:
        gpu = job.gpu
        size = config.size or ("full" if gpu else "tiny")
        where = f"GPUs: {int(ray.cluster_resources()['GPU'])}" if gpu else "no GPU: Triton interpreter on CPU"
        console.print(f"[bold]kgym demo[/]: Ray up in {time.perf_counter() - t0:.1f} s ({where}), size {size}, "
                      f"run {run_id}")
        task_actor = TaskActor.remote(CurriculumConfig(size=size), config.seed)
        families = ray.get(task_actor.families.remote())
        requests, expect, skipped = build_requests(task_actor, families, config, size, gpu)
        pool, endpoint = job.pool, job.metrics_endpoint
        console.print(f"{len(requests)} evaluations ({len(families) - len(skipped)} families"
                      f"{f', {len(EXPLOITS)} exploits' if config.exploits else ''}) on {pool.num_workers} "
                      f"{'GPU' if pool.gpu else 'CPU'} worker(s)")
        for s in skipped:
            console.print(f"[yellow]skipped family[/] {s}")
        if config.compile_baselines != "wait":
            pool.prefetch(requests)  # measured by workers while idle; the verdicts never wait for them
        results = []
        with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=False) as progress:
            bar = progress.add_task("verifying", total=len(requests))

            def on_result(r) -> None:
                results.append(r)
                task_actor.record.remote(r.request.task["task_id"], r.request.task["stage"], r.outcome == "passed")
                g = r.verdict.gate or ("error" if r.outcome == "error" else "passed")
                progress.update(bar, advance=1, description=f"{r.request.task['family']:<13} {r.request.label:<22} {g}")

            report = stream(pool, job.sink, requests, on_result=on_result)
        verdicts_s = time.perf_counter() - t0
        if config.compile_baselines == "finish":
            t = time.perf_counter()
            settled = ray.get([pool.actor(w).settle_baselines.remote(FINISH_BASELINES_S) for w in pool.worker_ids()])
            console.print(f"deferred torch.compile baselines measured in {time.perf_counter() - t:.1f} s"
                          + ("" if all(settled) else " [yellow](some still pending: time limit)[/]"))
        summary = job.finish()
        console.print(family_table(results, expect))
        if config.exploits:
            console.print(exploit_table(results, expect))
        problems = unmet(results, expect)
        wall = time.perf_counter() - t0
        for p in problems:
            console.print(f"[red]unexpected[/]: {p}")
        console.print(f"{len(results)} evaluations in {wall:.1f} s (the last verdict at {verdicts_s:.1f} s; "
                      f"{report.pool.replaced} worker(s) replaced, "
                      f"{report.pool.retried} farm retries); records: {summary.run_path}")
        console.print("[green]every answer got the verdict it should[/]" if not problems
                      else f"[red]{len(problems)} answer(s) did not get the verdict they should[/]")
        console.print(next_steps(summary.run_path, config.records.out, exploits=config.exploits))
        return DemoSummary(run_path=summary.run_path, evaluations=len(results), farm_errors=report.farm_errors,
                           unmet=problems, skipped_families=skipped, workers=pool.num_workers, gpu=pool.gpu,
                           wall_s=wall, metrics_endpoint=endpoint)


def next_steps(run_path: str, records_out: str, exploits: bool) -> str:
    """The demo's last lines: where to look next. `kgym replay` counts every row of a family, so the
    exploits (sent to relu-v1) count under elementwise there, unlike the family table above."""
    lines = ["next: the figures (solve rates, gate failures, speedups), then the same in a notebook:",
             f"  kgym replay {run_path} --plots plots/",
             f"  KGYM_RUN_DIR={records_out} jupyter lab notebooks/replay.ipynb"]
    if exploits:
        lines.append(f"(replay counts the {len(EXPLOITS)} exploits as elementwise rows: a lower elementwise solve "
                     "rate than the table's)")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="TOML config (DemoConfig's keys: python -m jobs.demo --help-config)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                   help="override a config key, e.g. farm.workers=4 (value: a TOML literal; repeatable)")
    p.add_argument("--out", help="records root, a path or a URI (records.out; default out/demo)")
    p.add_argument("--run-id", help="run id (records.run_id; default: a timestamp)")
    p.add_argument("--size", choices=["tiny", "small", "full"], help="task size (default: full on GPU, tiny on CPU)")
    p.add_argument("--workers", type=int, help="verifier workers (farm.workers; default: one per GPU, else per core)")
    p.add_argument("--seed", type=int, help="curriculum seed (default 0)")
    p.add_argument("--no-exploits", action="store_true", help="skip the hostile answers")
    p.add_argument("--metrics-port", type=int, help="Prometheus exporter port (metrics.port; default: any free one)")


def config_from_args(args: argparse.Namespace) -> DemoConfig:
    """The config file (if any), then the flags, then `--set`; a bad key or value is a usage error."""
    from kgym.cli_common import UsageError

    sets = []
    for flag, key in (("out", "records.out"), ("run_id", "records.run_id"), ("size", "size")):
        if getattr(args, flag, None) is not None:
            sets.append(f"{key}={json.dumps(getattr(args, flag))}")
    for flag, key in (("workers", "farm.workers"), ("seed", "seed"), ("metrics_port", "metrics.port")):
        if getattr(args, flag, None) is not None:
            sets.append(f"{key}={getattr(args, flag)}")
    if getattr(args, "no_exploits", False):
        sets.append("exploits=false")
    try:
        return load_job_config(DemoConfig, getattr(args, "config", None), sets + list(getattr(args, "overrides", [])))
    except ConfigError as e:
        raise UsageError(str(e)) from None


def main(argv: list[str] | None = None) -> int:
    from kgym.cli_common import run_piped

    return run_piped(lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    from jobs.sections import describe
    from kgym.cli_common import UsageError

    p = argparse.ArgumentParser(prog="python -m jobs.demo", description=__doc__.splitlines()[0])
    add_arguments(p)
    p.add_argument("--help-config", action="store_true", help="print every config key with its default and exit")
    args = p.parse_args(argv)
    if args.help_config:
        print(describe(DemoConfig))
        return 0
    try:
        summary = run_demo(config_from_args(args))
    except (UsageError, ConfigError) as e:
        print(f"jobs.demo: error: {e}", file=sys.stderr)
        return 2
    return 0 if not summary.unmet and not summary.farm_errors else 1


if __name__ == "__main__":
    sys.exit(main())
