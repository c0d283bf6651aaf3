"""The main job, `kgym demo`: every family's reference solution, known-wrong answer and a few exploits
through the Ray farm, streamed to Parquet and Prometheus, with a progress bar and closing tables.

    kgym demo [--out DIR] [--workers N] [--size tiny|small|full] [--metrics-port N]
    python -m jobs.demo [same options]

Starts an embedded Ray (or joins the cluster of `ray job submit`), a `TaskActor` that draws one task
per family at its curriculum rung, a `RecordSink` (Parquet under OUT/RUN_ID/, Prometheus exporter,
file_sd target under /tmp/kgym/prometheus/) and a `VerifierPool` (one worker per GPU; on a CPU-only
machine one per core, tasks at the tiny size). Each verdict is reported back to the curriculum.
Exit status 0 when every answer got the verdict it should (solutions pass, wrong answers and
exploits are rejected, exploits at their expected gate), 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from jobs.demo_report import Expectation, exploit_table, family_table, unmet

ANSWERS = Path(__file__).parent / "demo_answers"
# The gate each hostile answer must be rejected at.
EXPLOITS = {"torch_fallback": "isolation", "infinite_loop": "timeout", "exit_process": "policy",
            "hardcoded_output": "launch", "huge_allocation": "crash"}
CPU_VERIFY = {"timed_runs": 5, "warmup_runs": 1, "max_remeasure": 1}  # the interpreter is slow; speed is not the point
EXPLOIT_TIMEOUT_S = 8.0  # per request to a hostile candidate (the infinite loop costs one worker this long)


@dataclass(frozen=True)
class DemoConfig:
    out: str = "out/demo"
    run_id: str | None = None  # default: a timestamp
    size: str | None = None  # default: full with GPUs, tiny without
    workers: int | None = None  # default: one per GPU, else one per CPU core
    seed: int = 0
    per_family: int = 1
    exploits: bool = True
    metrics_port: int | None = 0  # None: no exporter; 0: any free port
    num_cpus: int | None = None  # embedded Ray only


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

    from kgym.tasks import make
    from kgym.contract import EvalRequest

    requests, expect, skipped = [], {}, []
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
                req = EvalRequest.for_task(task, source, label=kind, **({} if gpu else CPU_VERIFY))
                requests.append(req)
                expect[req.evaluation_id] = Expectation(kind, task.task_id)
    if config.exploits:
        relu = make("relu-v1", config.seed, size=size)
        for name, gate in EXPLOITS.items():
            source = (ANSWERS / f"{name}.py").read_text()
            req = EvalRequest.for_task(relu, source, label=f"exploit:{name}", timeout_s=EXPLOIT_TIMEOUT_S,
                                       **({} if gpu else CPU_VERIFY))
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

    from jobs.stream import stream
    from kgym.tasks.curriculum import CurriculumConfig
    from ray_cluster import (PoolConfig, RaySettings, RecordSink, SinkConfig, TaskActor, VerifierPool,
                             WorkerConfig, connect)

    console = console or Console()
    t0 = time.perf_counter()
    run_id = config.run_id or time.strftime("demo-%Y%m%d-%H%M%S")
    started = connect(RaySettings(num_cpus=config.num_cpus))
    pool = sink = None
    try:
        gpu = int(ray.cluster_resources().get("GPU", 0)) > 0
        size = config.size or ("full" if gpu else "tiny")
        console.print(f"[bold]kgym demo[/]: Ray up in {time.perf_counter() - t0:.1f} s "
                      f"({'GPUs: %d' % ray.cluster_resources()['GPU'] if gpu else 'no GPU: Triton interpreter on CPU'}), "
                      f"size {size}, run {run_id}")
        task_actor = TaskActor.remote(CurriculumConfig(size=size), config.seed)
        sink = RecordSink.remote(SinkConfig(root=config.out, run_id=run_id, job_id="demo",
                                            metrics_port=config.metrics_port,
                                            targets_file=f"/tmp/kgym/prometheus/{run_id}.json"
                                            if config.metrics_port is not None else None))
        pool = VerifierPool(PoolConfig(workers=config.workers, worker=WorkerConfig(spares=None if gpu else 2)))
        families = ray.get(task_actor.families.remote())
        requests, expect, skipped = build_requests(task_actor, families, config, size, gpu)
        endpoint = ray.get(sink.metrics_endpoint.remote())
        console.print(f"{len(requests)} evaluations ({len(families) - len(skipped)} families"
                      f"{', %d exploits' % len(EXPLOITS) if config.exploits else ''}) on {pool.num_workers} "
                      f"{'GPU' if pool.gpu else 'CPU'} worker(s)"
                      + (f"; metrics on http://{endpoint}/metrics" if endpoint else ""))
        for s in skipped:
            console.print(f"[yellow]skipped family[/] {s}")
        results = []
        with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=False) as progress:
            bar = progress.add_task("verifying", total=len(requests))

            def on_result(r) -> None:
                results.append(r)
                task_actor.record.remote(r.request.task["task_id"], r.request.task["stage"], r.outcome == "passed")
                g = r.verdict.gate or ("error" if r.outcome == "error" else "passed")
                progress.update(bar, advance=1, description=f"{r.request.task['family']:<13} {r.request.label:<22} {g}")

            report = stream(pool, sink, requests, on_result=on_result)
        summary = ray.get(sink.close.remote())
        console.print(family_table(results, expect))
        if config.exploits:
            console.print(exploit_table(results, expect))
        problems = unmet(results, expect)
        wall = time.perf_counter() - t0
        for p in problems:
            console.print(f"[red]unexpected[/]: {p}")
        console.print(f"{len(results)} evaluations in {wall:.1f} s ({report.pool.replaced} worker(s) replaced, "
                      f"{report.pool.retried} farm retries); records: {summary.run_path} "
                      f"(`kgym replay {summary.run_path}`)")
        console.print("[green]every answer got the verdict it should[/]" if not problems
                      else f"[red]{len(problems)} answer(s) did not get the verdict they should[/]")
        return DemoSummary(run_path=summary.run_path, evaluations=len(results), farm_errors=report.farm_errors,
                           unmet=problems, skipped_families=skipped, workers=pool.num_workers, gpu=pool.gpu,
                           wall_s=wall, metrics_endpoint=endpoint)
    finally:
        if pool is not None:
            pool.close()
        if started:
            ray.shutdown()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="out/demo", help="records root (default out/demo)")
    p.add_argument("--run-id", help="run id (default: a timestamp)")
    p.add_argument("--size", choices=["tiny", "small", "full"], help="task size (default: full on GPU, tiny on CPU)")
    p.add_argument("--workers", type=int, help="verifier workers (default: one per GPU, else one per core)")
    p.add_argument("--seed", type=int, default=0, help="curriculum seed (default 0)")
    p.add_argument("--no-exploits", action="store_true", help="skip the hostile answers")
    p.add_argument("--metrics-port", type=int, default=0, help="Prometheus exporter port (default: any free one)")


def config_from_args(args: argparse.Namespace) -> DemoConfig:
    return DemoConfig(out=args.out, run_id=args.run_id, size=args.size, workers=args.workers, seed=args.seed,
                      exploits=not args.no_exploits, metrics_port=args.metrics_port)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m jobs.demo", description=__doc__.splitlines()[0])
    add_arguments(p)
    summary = run_demo(config_from_args(p.parse_args(argv)))
    return 0 if not summary.unmet and not summary.farm_errors else 1


if __name__ == "__main__":
    sys.exit(main())
