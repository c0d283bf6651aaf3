"""One evaluation as a row: `make_record(task=..., candidate_source=..., verdict=..., ...)`, and back.

Covers flattening a task spec (a plain dict, as `TaskSpec.to_dict()` gives it), a candidate, a
`Verdict`, its reward, the worker and the episode fields into a row dict keyed by the columns of
`schema.py`, and `verdict_from_record`, which rebuilds from a stored row every field the reward
reads, so a stored row can be scored again under another `RewardConfig`. The row is plain data
(picklable, JSON-able apart from datetimes) so it can travel from a verifier actor to a record
sink. Does not stamp run, job, write time or schema version: the writer that owns the run does that.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping
from typing import Any

from kgym.contract import (
    CaseResult,
    Episode,
    EvalResult,
    Gate,
    Outcome,
    Timing,
    Verdict,
    WorkerInfo,
    canonical_json,
    evaluation_id,
    source_hash,
)
from kgym.contract.verdict import UNSTABLE_BASELINE, usable_baseline
from kgym.reward import RewardConfig
from kgym.reward import reward as reward_of

# Keys of a task spec (TaskSpec.to_dict()) that get columns of their own; only task_id and family are
# required. Every key, these and any other (distribution, source, spec_version, ...), is part of the
# evaluation id and is kept whole in `task_json`.
TASK_KEYS = ("task_id", "family", "operation", "stage", "seed", "size", "dtype", "shapes", "answer_mode")
# Columns the writer fills in.
WRITER_COLUMNS = ("schema_version", "run_id", "job_id", "recorded_at")


def outcome_of(verdict: Verdict) -> Outcome:
    """passed, failed (a gate, timeout or crash: the candidate's fault) or error (kgym's fault)."""
    if verdict.error is not None:
        return Outcome.ERROR
    return Outcome.PASSED if verdict.passed else Outcome.FAILED


def _timestamp(t: dt.datetime | float | None) -> dt.datetime | None:
    if t is None:
        return None
    if isinstance(t, (int, float)):
        return dt.datetime.fromtimestamp(t, tz=dt.UTC)
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


def make_record(*, task: Mapping[str, Any], candidate_source: str, verdict: Verdict,
                reward_config: RewardConfig = RewardConfig(), reward: float | None = None,
                worker: WorkerInfo | None = None, episode: Episode | None = None,
                seed: int | None = None, started_at: dt.datetime | float | None = None,
                finished_at: dt.datetime | float | None = None, case_salt: str = "") -> dict[str, Any]:
    """A row for the writer. `seed` is the verifier's public seed (default: the task's seed);
    `case_salt` the hidden cases' salt of the request (an RL episode's answer; part of its id). The
    reward is `kgym.reward.reward(verdict, reward_config)` unless `reward` gives it (an episode's
    reward, with churn and group credit); the row's `baseline` is the config's. Times are datetimes
    or POSIX seconds."""
    if "task_id" not in task or "family" not in task:
        raise ValueError("a task needs at least task_id and family")
    try:
        task_json = canonical_json(dict(task))
    except (TypeError, ValueError) as e:
        raise ValueError(f"a task spec must be plain JSON data: {e}") from None
    seed = int(seed if seed is not None else task.get("seed") or 0)
    worker = worker or WorkerInfo()
    t = verdict.timings
    cand, eager, comp = t.get("candidate"), t.get("eager"), t.get("compile")
    clock = next((x.clock for x in (cand, eager, comp) if x is not None), None)
    shapes = task.get("shapes")
    return {
        "evaluation_id": evaluation_id(task, candidate_source, seed, verdict.verifier_version, case_salt),
        "started_at": _timestamp(started_at),
        "finished_at": _timestamp(finished_at),
        "task_id": str(task["task_id"]),
        "family": str(task["family"]),
        "operation": task.get("operation"),
        "stage": task.get("stage"),
        "task_seed": task.get("seed"),
        "size": task.get("size"),
        "dtype": task.get("dtype"),
        "shapes_json": canonical_json(shapes) if shapes is not None else None,
        "answer_mode": task.get("answer_mode"),
        "task_json": task_json,
        "verify_seed": seed,
        "candidate_hash": source_hash(candidate_source),
        "candidate_source": candidate_source,
        "passed": bool(verdict.passed),
        "outcome": str(outcome_of(verdict)),
        "gate": None if verdict.gate is None else str(verdict.gate),
        "reason": verdict.reason or None,
        "error": verdict.error,
        "cases": [{"name": c.name, "passed": c.passed, "max_abs_err": c.max_abs_err, "max_rel_err": c.max_rel_err,
                   "passed_loose": c.passed_loose, "order": c.order, "note": c.note} for c in verdict.cases],
        "cases_passed": verdict.cases_passed,
        "cases_total": len(verdict.cases),
        "candidate_ms": cand.median_ms if cand else None,
        "candidate_spread_ms": cand.spread_ms if cand else None,
        "candidate_runs": cand.runs if cand else None,
        "candidate_stable": cand.stable if cand else None,
        "eager_ms": eager.median_ms if eager else None,
        "eager_spread_ms": eager.spread_ms if eager else None,
        "compile_ms": comp.median_ms if comp else None,
        "compile_spread_ms": comp.spread_ms if comp else None,
        "timing_clock": clock,
        "speedup_eager": verdict.speedup_eager,
        "speedup_compile": verdict.speedup_compile,
        "flagged": bool(verdict.flagged),
        "launches": int(verdict.launches),
        "device_launches": verdict.device_launches,
        "library_calls": int(verdict.library_calls),
        "hybrid": bool(verdict.hybrid),
        "baseline": str(reward_config.baseline),
        "device": verdict.device,
        "verify_seconds": verdict.stages_s.get("total"),
        "stages_json": json.dumps(verdict.stages_s, sort_keys=True),
        "notes": list(verdict.notes),
        "verifier_version": verdict.verifier_version,
        "reward": float(reward_of(verdict, reward_config) if reward is None else reward),
        "worker_id": worker.worker_id,
        "worker_host": worker.host,
        "gpu_name": worker.gpu_name,
        "torch_version": worker.torch_version,
        "triton_version": worker.triton_version,
        "group_id": episode.group_id if episode else None,
        "sample_index": episode.sample_index if episode else None,
        "turn": episode.turn if episode else None,
        "eager_stable": usable_baseline(eager) if eager else None,  # the figure may stand for a speedup
        "compile_stable": usable_baseline(comp) if comp else None,
    }


def record_of(result: EvalResult, reward_config: RewardConfig = RewardConfig()) -> dict[str, Any]:
    """The row of one farm result (`kgym.contract.EvalResult`): its verdict, worker, episode and times."""
    req = result.request
    return make_record(task=req.task, candidate_source=req.candidate, verdict=result.verdict,
                       reward_config=reward_config, worker=result.worker, episode=req.episode, seed=req.seed,
                       started_at=result.started_at, finished_at=result.finished_at,
                       case_salt=str(req.overrides.get("case_salt", "")))


def _float(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def verdict_from_record(row: Mapping[str, Any]) -> Verdict:
    """The verdict a stored row was made from, as far as the row keeps it: outcome, gate, cases,
    timings, speedups, flags and counters (not the per-stage notes of timings kept only in JSON).
    `reward(verdict_from_record(row), RewardConfig(baseline=row["baseline"]))` gives the row's reward
    back for every row written with `make_record`'s default reward."""
    def get(key: str) -> Any:
        v = row.get(key)
        return None if isinstance(v, float) and math.isnan(v) else v

    cases = [CaseResult(name=str(c["name"]), passed=bool(c["passed"]), max_abs_err=_float(c.get("max_abs_err")),
                        max_rel_err=_float(c.get("max_rel_err")), passed_loose=bool(c.get("passed_loose")),
                        order=str(c.get("order") or "reference_first"), note=str(c.get("note") or ""))
             for c in (get("cases") if get("cases") is not None else [])]
    clock = get("timing_clock") or "host"
    timings: dict[str, Timing | None] = {}
    if get("candidate_ms") is not None:
        timings["candidate"] = Timing(median_ms=float(get("candidate_ms")),
                                      spread_ms=float(get("candidate_spread_ms") or 0.0),
                                      runs=int(get("candidate_runs") or 0), stable=bool(get("candidate_stable")),
                                      clock=clock)
    notes = [str(n) for n in (get("notes") if get("notes") is not None else [])]
    for kind in ("eager", "compile"):
        ms = get(f"{kind}_ms")
        # The row's stability column (schema 2); a row of schema 1 kept it only in a note
        # (`unstable_baseline_note`). Without either, a rescore paid speed the verdict never did.
        stable = get(f"{kind}_stable")
        if stable is None:
            stable = not any(n.startswith(UNSTABLE_BASELINE.format(kind=kind)) for n in notes)
        timings[kind] = None if ms is None else Timing(median_ms=float(ms), spread_ms=float(get(f"{kind}_spread_ms")
                                                                                            or 0.0),
                                                       runs=0, stable=bool(stable), clock=clock)
    stages = get("stages_json")
    return Verdict(passed=bool(get("passed")), gate=None if get("gate") is None else Gate(get("gate")),
                   reason=get("reason") or "", cases=cases, timings=timings,
                   speedup_eager=_float(get("speedup_eager")), speedup_compile=_float(get("speedup_compile")),
                   flagged=bool(get("flagged")), error=get("error"), device=str(get("device") or "cpu"),
                   hybrid=bool(get("hybrid")), launches=int(get("launches") or 0),
                   device_launches=None if get("device_launches") is None else int(get("device_launches")),
                   library_calls=int(get("library_calls") or 0),
                   stages_s=json.loads(stages) if stages else {},
                   # pandas gives list columns as numpy arrays, whose truth value is ambiguous
                   notes=notes,
                   verifier_version=str(get("verifier_version")))


def rescore(row: Mapping[str, Any], config: RewardConfig) -> float:
    """A stored row's reward under `config` (a farm row's; an episode's final row also carried churn and
    group credit, which only the episode knows)."""
    return reward_of(verdict_from_record(row), config)


def custom_task(reference_path: str, reference_source: str, seed: int, hybrid: bool = False) -> dict[str, Any]:
    """The task spec of a bare `kgym verify --reference REF.py`: family custom, operation the file's
    stem; the id names the reference's content, so two references with one name stay apart."""
    from pathlib import Path

    stem = Path(reference_path).stem
    return {"task_id": f"custom-{stem}-{source_hash(reference_source)[:12]}", "family": "custom",
            "operation": stem, "stage": "full", "seed": int(seed), "size": None, "dtype": None, "shapes": None,
            "answer_mode": "hybrid" if hybrid else "triton"}
