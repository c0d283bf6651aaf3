"""Stage 7 of the funnel: verify every request through every gate, resumably.

A `Backend` verifies requests, records each verdict under RECORDS/RUN_ID (kgym's records layout)
and reads back what that run already holds: `LocalBackend` runs one `kgym.verify.Verifier` in this
process (tests, a laptop); the farm backend of `jobs/curate.py` streams them through the farm and
its `RecordSink`. `verify_all` is the resume logic: requests whose evaluation id already has a
verdict in the run's records are not verified again (an evaluation id names task spec, candidate, seed and
verifier version, so a changed row or a new verifier is verified afresh). A row whose outcome is a
kgym error is not a verdict: it is retried by the next run. Does not decide what a verdict means
for the dataset (`classify.py`, `labels.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kgym.contract import EvalRequest, Outcome, Verdict

OnResult = Callable[[EvalRequest, Verdict], None]


class Backend(Protocol):
    def recorded(self) -> dict[str, Verdict]:
        """Verdicts the run's records already hold, by evaluation id (`recorded_verdicts`)."""

    def run(self, requests: Sequence[EvalRequest], on_result: OnResult) -> None:
        """Verify `requests`, record each verdict in the run's records, call `on_result` for each."""


def recorded_verdicts(records: str | Path, run_id: str) -> dict[str, Verdict]:
    """Verdicts already recorded in the run, by evaluation id (kgym errors left out: they are retried).
    `records` is a local root or a URI the records reader understands."""
    from kgym.records.layout import check_id, run_dir
    from kgym.records.reader import kept_positions, read_table
    from kgym.records.record import verdict_from_record

    if "://" in str(records):
        path: str | Path = f"{str(records).rstrip('/')}/{check_id(run_id, 'run id')}"
    else:
        path = run_dir(records, run_id)
        if not path.is_dir():
            return {}
    try:
        table = read_table(path)
    except FileNotFoundError:  # a run directory made by a writer that never flushed a part
        return {}
    if not table.num_rows:
        return {}
    # Plain Python rows (not pandas'): list columns must read back as lists, not numpy arrays.
    rows = table.take(kept_positions(table.select(["evaluation_id", "outcome", "recorded_at"]).to_pandas())).to_pylist()
    return {row["evaluation_id"]: verdict_from_record(row) for row in rows if row["outcome"] != str(Outcome.ERROR)}


@dataclass
class VerifyReport:
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # by evaluation id, resumed ones included
    resumed: int = 0  # requests answered from the run's records
    verified: int = 0  # requests verified by this run
    wall_s: float = 0.0  # seconds spent verifying in this run


def verify_all(requests: Sequence[EvalRequest], backend: Backend, on_result: OnResult | None = None,
               on_resumed: Callable[[int], None] | None = None) -> VerifyReport:
    done = backend.recorded() if requests else {}
    ids = {r.evaluation_id for r in requests}
    report = VerifyReport(verdicts={k: v for k, v in done.items() if k in ids})
    report.resumed = len(report.verdicts)
    if on_resumed is not None:
        on_resumed(report.resumed)
    todo, queued = [], set()
    for r in requests:  # one request per id (two rows may ask for one evaluation)
        if r.evaluation_id not in report.verdicts and r.evaluation_id not in queued:
            queued.add(r.evaluation_id)
            todo.append(r)

    def got(request: EvalRequest, verdict: Verdict) -> None:
        report.verdicts[request.evaluation_id] = verdict
        report.verified += 1
        if on_result is not None:
            on_result(request, verdict)

    t0 = time.perf_counter()
    if todo:
        backend.run(todo, got)
    report.wall_s = time.perf_counter() - t0
    return report


class LocalBackend:
    """One `Verifier` in this process; rows go to a `RecordWriter` flushed every `flush_rows` verdicts
    (a killed run loses at most that many)."""

    def __init__(self, verify: dict[str, Any], records: str | Path, run_id: str, *, job_id: str = "curate",
                 spares: int = 1, case_secret: bytes | None = None, flush_rows: int = 4):
        self.verify = dict(verify)
        self.records, self.run_id, self.job_id = records, run_id, job_id
        self.spares, self.case_secret, self.flush_rows = spares, case_secret, flush_rows

    def recorded(self) -> dict[str, Verdict]:
        return recorded_verdicts(self.records, self.run_id)

    def run(self, requests: Sequence[EvalRequest], on_result: OnResult) -> None:
        from kgym.contract import WorkerInfo
        from kgym.records.record import make_record
        from kgym.records.writer import RecordWriter
        from kgym.verify import Verifier, VerifyConfig

        with Verifier(VerifyConfig(**self.verify), spares=self.spares, case_secret=self.case_secret) as verifier, \
                RecordWriter(self.records, self.run_id, self.job_id, flush_rows=self.flush_rows) as writer:
            worker = WorkerInfo.here(str(verifier.device), worker_id="local")
            for r in requests:
                started = time.time()
                verdict = verifier.verify(r.reference, r.candidate, seed=r.seed, **dict(r.overrides))
                writer.write(make_record(task=r.task, candidate_source=r.candidate, verdict=verdict, worker=worker,
                                         episode=r.episode, seed=r.seed, started_at=started, finished_at=time.time()))
                on_result(r, verdict)
