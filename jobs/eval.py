"""KernelBench evaluation: generations in -> the farm -> records Parquet -> fast_p scores.

    python -m jobs.eval --kernelbench DIR --generations GEN.jsonl [--out out/eval] [--run-id ID]
                        [--workers N] [--timed-runs N] [--scores FILE.json] [--config FILE.toml] [--set KEY=VALUE]
    python -m jobs.eval --help-config                          # every key, default and bound
    ray job submit --working-dir . -- python -m jobs.eval --kernelbench DIR --generations GEN.jsonl --out /abs/out

Reads the generations (`kgym.kernelbench.generations`), matches them to the checkout's problems and
extracts the code (`kgym.kernelbench.plan`), records answers without code as compile failures, and
streams the rest through the farm into a `RecordSink` with the same driver loop as `jobs.verify`
(`jobs.context.farm_job` + `jobs.stream.stream`): resumable by run id, farm failures retried. Then
it reads the run back and writes the score table (`kgym.kernelbench.score`, figures.json's keys)
and, when some problem has several samples, their mean and spread, as JSON. The flags are
shorthands for config keys (`--out` is `records.out`, `--workers` `farm.workers`, `--verify K=V`
`verify.K`, ...); a TOML config and `--set` give every key. Exit status: 0 when every answer has a
verdict, 1 when the farm gave up on some, 2 for bad usage or input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobs.job_cli import job_main, parser, toml_string
from jobs.sections import (
    option,
    partial,
    section,
)
from kgym.farm.farm_config import PoolConfig, RaySettings, check_verify_table
from kgym.kernelbench import Checkout, KernelBenchError, read_generations, results_from_records, score
from kgym.kernelbench.multisample import multi_sample
from kgym.kernelbench.plan import HYBRID_LEVELS, make_plan
from kgym.sink_config import MetricsConfig, RecordsConfig
from kgym.verify.config import VerifyConfig


@dataclass(frozen=True)
class EvalJobConfig:
    kernelbench: str = option(doc="a KernelBench checkout")
    generations: str = option(doc="JSONL: level, problem_id, model, answer[, sample]")
    scores: str | None = option(None, "scores JSON; omit: OUT/RUN_ID.scores.json")
    hybrid_levels: tuple[int, ...] = option(HYBRID_LEVELS, "levels allowing one cuBLAS/cuDNN call in forward")
    records: RecordsConfig = section(RecordsConfig, "where the rows go", out="out/eval", run_id="eval",
                                      job_id="eval")
    farm: PoolConfig = section(PoolConfig, "the verifier workers")
    verify: dict[str, Any] = partial(VerifyConfig, "the verifier's settings for every answer; a key "
                                     "left out: the verifier's default")
    metrics: MetricsConfig = section(MetricsConfig, "the Prometheus exporter")
    ray: RaySettings = section(RaySettings, "which Ray")

    def __post_init__(self) -> None:
        check_verify_table(self.verify)


@dataclass(frozen=True)
class EvalJobResult:
    run_path: str
    scores_path: str
    scores: dict[str, Any]
    verified: int
    unanswered: int
    farm_errors: int


def _speedup(value: float | None) -> str:
    """A speedup for the progress line; one never measured (a failed candidate, a deferred baseline) is
    "-", not "x0.00", which read as a measured slowdown. 3 significant digits: the CPU's are ~1e-4x."""
    return "-" if value is None else f"x{value:.3g}"


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


def write_json(obj: Any, path: str | Path) -> str:
    """Write `obj` as JSON to a local path (temp + rename) or a URI (one upload); returns where."""
    from kgym.records.layout import locate

    text = json.dumps(obj, indent=1, sort_keys=False) + "\n"
    where = locate(str(path))
    if where.local:
        p = Path(where.path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.tmp")
        tmp.write_text(text)
        os.replace(tmp, p)
    else:
        where.fs.create_dir(where.parent().path, recursive=True)
        with where.fs.open_output_stream(where.path) as out:
            out.write(text.encode())
    return where.uri


def run_eval_job(config: EvalJobConfig, log: Callable[[str], None] = print) -> EvalJobResult:
    import ray

    from jobs.context import farm_job, records_root
    from jobs.stream import stream

    plan = make_plan(Checkout(config.kernelbench), read_generations(config.generations),
                     hybrid_levels=config.hybrid_levels, verify=config.verify)
    requests = list(plan.items)
    root = records_root(config.records.out)
    scores_to = (records_root(config.scores) if config.scores
                 else f"{root.rstrip('/')}/{config.records.run_id}.scores.json")

    def write_unanswered(sink) -> None:
        if plan.unanswered:
            ray.get(sink.write.remote(plan.unanswered))

    with farm_job("jobs.eval", config.ray, config.records, config.metrics, config.farm, config.verify, log,
                  before_pool=write_unanswered) as job:
        log(f"jobs.eval: {len(requests)} answers to verify, {len(plan.unanswered)} without code, "
            f"{plan.problems} problems, {job.pool.num_workers} {'GPU' if job.pool.gpu else 'CPU'} worker(s), "
            f"run {config.records.run_id}")
        done = [0]

        def on_result(r) -> None:
            done[0] += 1
            v = r.verdict
            log(f"[{done[0]}/{len(requests)}] {r.request.label} {r.outcome} gate={v.gate or '-'} "
                f"eager {_speedup(v.speedup_eager)} compile {_speedup(v.speedup_compile)} "
                f"verify {v.stages_s.get('total') or 0:.1f} s" + _why(v))

        report = stream(job.pool, job.sink, requests, on_result=on_result)
        summary = job.finish()
    scores = score_run(summary.run_path)
    scores_path = write_json(scores, scores_to)
    log(f"jobs.eval: {report.results} verified, {report.skipped} already recorded, {report.farm_errors} farm "
        f"error(s), {report.wall_s:.1f} s; records in {summary.run_path}; scores in {scores_path}")
    return EvalJobResult(run_path=summary.run_path, scores_path=str(scores_path), scores=scores,
                         verified=report.results, unanswered=len(plan.unanswered), farm_errors=report.farm_errors)


def _why(verdict) -> str:
    """The progress line's tail for an answer that did not pass: the farm's error or the verdict's
    reason, on one line and short (the record keeps all of it)."""
    text = verdict.error or ("" if verdict.passed else verdict.reason)
    if not text:
        return ""
    lines = [line.strip() for line in str(text).strip().splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return f": {last[:200]}"


def _verify_arg(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--verify takes KEY=VALUE, got {text!r}")
    return key, value


def overrides_from_args(a: argparse.Namespace) -> list[str]:
    """The flags as overrides (they win over the config file; `--set` wins over both)."""
    out = []
    for flag, key in (("kernelbench", "kernelbench"), ("generations", "generations"), ("out", "records.out"),
                      ("run_id", "records.run_id"), ("scores", "scores"), ("ray_address", "ray.address")):
        if getattr(a, flag) is not None:
            out.append(f"{key}={toml_string(getattr(a, flag))}")
    if a.hybrid_levels is not None:
        out.append(f"hybrid_levels=[{', '.join(x.strip() for x in a.hybrid_levels.split(',') if x.strip())}]")
    if a.workers is not None:
        out.append(f"farm.workers={a.workers}")
    if a.num_cpus is not None:
        out.append(f"ray.num_cpus={a.num_cpus}")
    if a.timed_runs:
        out.append(f"verify.timed_runs={a.timed_runs}")
    out += [f"verify.{k}={v}" for k, v in a.verify]
    return out


def _finish(result) -> int:
    from kgym.kernelbench.scoring import format_table

    print(format_table(result.scores))
    return 1 if result.farm_errors else 0


def main(argv: list[str] | None = None) -> int:
    p = parser("eval", __doc__, "farm.workers=4")
    p.add_argument("--kernelbench", help="a KernelBench checkout (kernelbench)")
    p.add_argument("--generations", help="JSONL: level, problem_id, model, answer[, sample] (generations)")
    p.add_argument("--out", help="records root, a path or a URI (records.out; default out/eval)")
    p.add_argument("--run-id", help="run id; re-running it resumes (records.run_id; default eval)")
    p.add_argument("--scores", help="scores JSON (default OUT/RUN_ID.scores.json)")
    p.add_argument("--hybrid-levels", help="levels allowing one cuBLAS/cuDNN call in forward "
                   f"(default {','.join(map(str, HYBRID_LEVELS))}; '' for none)")
    p.add_argument("--workers", type=int, help="verifier workers (farm.workers; default: one per GPU, else per CPU)")
    p.add_argument("--timed-runs", type=int, help="timed runs per candidate (verify.timed_runs; default 100 on CUDA)")
    p.add_argument("--verify", action="append", type=_verify_arg, default=[], metavar="KEY=VALUE",
                   help="a VerifyConfig field for every answer (verify.KEY; repeatable)")
    p.add_argument("--ray-address", help="Ray address (ray.address; default $RAY_ADDRESS or an embedded instance)")
    p.add_argument("--num-cpus", type=int, help="CPUs of an embedded Ray instance (ray.num_cpus)")
    return job_main(p, EvalJobConfig, run_eval_job, argv, shortcuts=overrides_from_args,
                        errors=(KernelBenchError, ValueError), finish=_finish)


if __name__ == "__main__":
    sys.exit(main())
