"""KernelBench evaluation: generations in -> the farm -> records Parquet -> fast_p scores.

    python -m jobs.eval --kernelbench DIR --generations GEN.jsonl [--out out/eval] [--run-id ID]
                        [--workers N] [--timed-runs N] [--scores FILE.json]
    ray job submit --working-dir . -- python -m jobs.eval --kernelbench DIR --generations GEN.jsonl

Reads the generations (`kgym.kernelbench.generations`), matches them to the checkout's problems and
extracts the code (`kgym.kernelbench.plan`), records answers without code as compile failures, and
streams the rest through a `VerifierPool` into a `RecordSink` with the same driver loop as
`jobs.verify` (`jobs.stream.stream`): resumable by run id, farm failures retried. Then it reads the
run back and writes the score table (`kgym.kernelbench.score`, figures.json's keys) and, when some
problem has several samples, their mean and spread, as JSON. Exit status: 0 when every answer has a
verdict, 1 when the farm gave up on some, 2 for bad usage or input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from kgym.kernelbench import Checkout, KernelBenchError, read_generations, results_from_records, score
from kgym.kernelbench.multisample import multi_sample
from kgym.kernelbench.plan import HYBRID_LEVELS, make_plan


@dataclass(frozen=True)
class EvalJobConfig:
    kernelbench: str
    generations: str
    out: str = "out/eval"
    run_id: str = "eval"
    job_id: str = "eval"
    scores: str | None = None  # default: OUT/RUN_ID.scores.json
    hybrid_levels: tuple[int, ...] = HYBRID_LEVELS
    workers: int | None = None
    max_in_flight: int = 2
    max_attempts: int = 3
    spares: int | None = None  # None: WorkerConfig's default (8 per GPU worker, 1 per CPU worker)
    call_timeout_s: float = 1800.0
    verify: dict[str, Any] = field(default_factory=dict)  # VerifyConfig fields for every answer
    ray_address: str | None = None
    ray_num_cpus: int | None = None


@dataclass(frozen=True)
class EvalJobResult:
    run_path: str
    scores_path: str
    scores: dict[str, Any]
    verified: int
    unanswered: int
    farm_errors: int


def score_run(run_path: str | Path) -> dict[str, Any]:
    """The score table of a recorded run (plus `multi_sample` when a problem has several samples)."""
    from kgym.records import load

    results = results_from_records(load(run_path))
    if not results:
        raise KernelBenchError(f"{run_path}: no kernelbench records")
    table: dict[str, Any]
    if len({r.sample for r in results}) > 1:
        table = {"multi_sample": multi_sample(results), **score(results, sample=0)}
    else:
        table = score(results)
    table["errors"] = sum(r.error for r in results)
    return table


def write_json(obj: Any, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(json.dumps(obj, indent=1, sort_keys=False) + "\n")
    os.replace(tmp, p)
    return p


def run_eval_job(config: EvalJobConfig, log: Callable[[str], None] = print) -> EvalJobResult:
    import ray

    from jobs.stream import stream
    from ray_cluster import PoolConfig, RaySettings, RecordSink, SinkConfig, VerifierPool, WorkerConfig, connect

    plan = make_plan(Checkout(config.kernelbench), read_generations(config.generations),
                     hybrid_levels=config.hybrid_levels, verify=config.verify)
    requests = list(plan.items)
    started = connect(RaySettings(address=config.ray_address, num_cpus=config.ray_num_cpus))
    pool = None
    try:
        sink = RecordSink.remote(SinkConfig(root=config.out, run_id=config.run_id, job_id=config.job_id))
        if plan.unanswered:
            ray.get(sink.write.remote(plan.unanswered))
        pool = VerifierPool(PoolConfig(workers=config.workers, max_in_flight=config.max_in_flight,
                                       max_attempts=config.max_attempts, call_timeout_s=config.call_timeout_s,
                                       worker=WorkerConfig(spares=config.spares, verify=dict(config.verify))))
        log(f"jobs.eval: {len(requests)} answers to verify, {len(plan.unanswered)} without code, "
            f"{plan.problems} problems, {pool.num_workers} {'GPU' if pool.gpu else 'CPU'} worker(s), run {config.run_id}")
        done = [0]

        def on_result(r) -> None:
            done[0] += 1
            v = r.verdict
            log(f"[{done[0]}/{len(requests)}] {r.request.label} {r.outcome} gate={v.gate or '-'} "
                f"eager x{v.speedup_eager or 0:.2f} compile x{v.speedup_compile or 0:.2f} "
                f"verify {v.stages_s.get('total') or 0:.1f} s")

        report = stream(pool, sink, requests, on_result=on_result)
        summary = ray.get(sink.close.remote())
    finally:
        if pool is not None:
            pool.close()
        if started:
            ray.shutdown()
    scores = score_run(summary.run_path)
    scores_path = write_json(scores, config.scores or Path(config.out) / f"{config.run_id}.scores.json")
    log(f"jobs.eval: {report.results} verified, {report.skipped} already recorded, {report.farm_errors} farm "
        f"error(s), {report.wall_s:.1f} s; records in {summary.run_path}; scores in {scores_path}")
    return EvalJobResult(run_path=summary.run_path, scores_path=str(scores_path), scores=scores,
                         verified=report.results, unanswered=len(plan.unanswered), farm_errors=report.farm_errors)


def _verify_arg(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"--verify takes KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m jobs.eval", description=__doc__.splitlines()[0])
    p.add_argument("--kernelbench", required=True, help="a KernelBench checkout")
    p.add_argument("--generations", required=True, help="JSONL: level, problem_id, model, answer[, sample]")
    p.add_argument("--out", default="out/eval", help="records root (default out/eval)")
    p.add_argument("--run-id", default="eval", help="run id; re-running it resumes (default eval)")
    p.add_argument("--scores", help="scores JSON (default OUT/RUN_ID.scores.json)")
    p.add_argument("--hybrid-levels", default=",".join(map(str, HYBRID_LEVELS)),
                   help="levels allowing one cuBLAS/cuDNN call in forward (default 2,3,4; '' for none)")
    p.add_argument("--workers", type=int, help="verifier workers (default: one per GPU, else per CPU)")
    p.add_argument("--timed-runs", type=int, help="timed runs per candidate (default 100 on CUDA)")
    p.add_argument("--verify", action="append", type=_verify_arg, default=[], metavar="KEY=VALUE",
                   help="a VerifyConfig field for every answer (repeatable)")
    p.add_argument("--ray-address", help="Ray address (default $RAY_ADDRESS or an embedded instance)")
    p.add_argument("--num-cpus", type=int, help="CPUs of an embedded Ray instance")
    a = p.parse_args(argv)
    verify = dict(a.verify)
    if a.timed_runs:
        verify["timed_runs"] = a.timed_runs
    try:
        from kgym.verify import VerifyConfig

        VerifyConfig(**verify)  # an unknown field is the user's error, said before Ray starts
    except TypeError as e:
        print(f"jobs.eval: error: --verify: {e}", file=sys.stderr)
        return 2
    try:
        levels = tuple(int(x) for x in a.hybrid_levels.split(",") if x.strip())
        config = EvalJobConfig(kernelbench=a.kernelbench, generations=a.generations, out=a.out, run_id=a.run_id,
                               scores=a.scores, hybrid_levels=levels, workers=a.workers, verify=verify,
                               ray_address=a.ray_address, ray_num_cpus=a.num_cpus)
        result = run_eval_job(config, log=lambda s: print(s, flush=True))
    except (KernelBenchError, ValueError) as e:
        print(f"jobs.eval: error: {e}", file=sys.stderr)
        return 2
    from kgym.kernelbench.scoring import format_table

    print(format_table(result.scores))
    return 1 if result.farm_errors else 0


if __name__ == "__main__":
    sys.exit(main())
