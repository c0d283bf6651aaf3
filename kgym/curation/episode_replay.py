"""Stage 9 of the funnel: gym replay rows, successful episodes from the Parquet records of RL runs.

An episode is a (run, group_id, sample_index) of rows with episode columns; it succeeded when one of
its evaluations passed every gate, and its answer is the last turn that passed (in a repair episode
the model kept revising; the records do not say which evaluation `finalize` named). Answers are
deduplicated by candidate hash; at most `per_family` per family are kept (the study: 40, so that
simple elementwise families do not swamp the set), fastest against eager first, then by evaluation
id, so a re-run keeps the same ones. The prompt is rebuilt from the recorded task spec; a spec that
no longer rebuilds (a task changed its version) is counted and skipped. Does not verify again: the
records are verdicts of the farm.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class ReplayRow:
    family: str
    task_id: str
    evaluation_id: str
    prompt: str
    answer: str
    answer_mode: str  # triton or hybrid, by the verdict's library calls
    speedup_eager: float | None
    speedup_compile: float | None


@dataclass
class ReplayCounts:
    episodes: int = 0  # successful episodes found
    duplicates: int = 0  # answers seen before
    unbuildable: int = 0  # task specs that no longer rebuild
    over_cap: int = 0  # past per_family
    by_family: dict[str, int] = field(default_factory=dict)  # rows kept per family


def _num(x) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _prompt(task_json: str) -> str | None:
    from kgym.tasks import TaskError, make_from_spec
    from kgym.tasks.spec import TaskSpec

    try:
        return make_from_spec(TaskSpec.from_dict(json.loads(task_json))).prompt()
    except (TaskError, ValueError, TypeError, KeyError):
        return None


def replay_rows(paths: Sequence[str | Path], per_family: int = 40) -> tuple[list[ReplayRow], ReplayCounts]:
    import pandas as pd

    from kgym.records.reader import load

    counts = ReplayCounts()
    frames = []
    for p in paths:
        try:
            frames.append(load(p))
        except FileNotFoundError:
            raise ValueError(f"replay: no records at {str(p)!r} (give an RL run's records directory)") from None
    frames = [f for f in frames if len(f)]
    if not frames:
        return [], counts
    df = pd.concat(frames, ignore_index=True)
    df = df[df["group_id"].notna() & df["passed"].astype(bool) & (df["outcome"] == "passed")]
    if not len(df):
        return [], counts
    df = df.assign(turn=df["turn"].fillna(0))
    last = df.sort_values("turn").groupby(["run_id", "group_id", "sample_index"], sort=False).tail(1)
    counts.episodes = len(last)
    last = last.assign(_speed=last["speedup_eager"].fillna(0.0)).sort_values(
        ["family", "_speed", "evaluation_id"], ascending=[True, False, True])
    rows: list[ReplayRow] = []
    seen: set[str] = set()
    for r in last.to_dict("records"):
        if r["candidate_hash"] in seen:
            counts.duplicates += 1
            continue
        seen.add(r["candidate_hash"])
        family = str(r["family"])
        if counts.by_family.get(family, 0) >= per_family:
            counts.over_cap += 1
            continue
        prompt = _prompt(r["task_json"])
        if prompt is None:
            counts.unbuildable += 1
            continue
        counts.by_family[family] = counts.by_family.get(family, 0) + 1
        rows.append(ReplayRow(family=family, task_id=str(r["task_id"]), evaluation_id=str(r["evaluation_id"]),
                              prompt=prompt, answer=str(r["candidate_source"]),
                              answer_mode="hybrid" if int(r.get("library_calls") or 0) > 0 else "triton",
                              speedup_eager=_num(r.get("speedup_eager")),
                              speedup_compile=_num(r.get("speedup_compile"))))
    return rows, counts
