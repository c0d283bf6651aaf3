"""The curation driver: a KernelBook-layout file in, a verified chat dataset and its funnel out.

    result = curate(config, LocalBackend(verify={"device": "cpu"}, records="out/records", run_id="curate"))

The order of the stages (the issue's, after the study):
 1. read the rows (`rows.py`)            4. decontaminate against KernelBench (`decontam.py`; first,
                                            as it reads only text: see funnel_names.py)
 2. normalise to KernelBench form (`normalise.py`)   3. duplicates and <= N per module (`cap.py`)
 5. classify by AST (`classify.py`)      6. scale the inputs to ~1M elements (`normalise.py`)
 7. verify through every gate (`verification.py`; answers the AST took for pure Triton that fail
    isolation are verified again as hybrids), and label hybrid by the verdict
 8. label faster than eager / compile (`labels.py`)   9. gym replay rows (`episode_replay.py`)
10. length filter (`length.py`)          11. the dataset (`dataset.py`), the report and its plot.
Every source row ends with a `Fate` (kept, or the stage that dropped it and why), so a test or a
user can see where each row went. Resumable through the verification records (`verify_all`).
This module is the only one that knows every stage; it wires them and owns no Ray (the farm
backend is passed in).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from kgym.contract import EvalRequest, Verdict
from kgym.curation.cap import cap_per_module
from kgym.curation.classify import answer_mode, ast_hybrid, retry_as_hybrid
from kgym.curation.curate_config import CurateConfig
from kgym.curation.dataset import DatasetRow, write_dataset
from kgym.curation.funnel_names import Drop, Label, Stage
from kgym.curation.labels import speed_labels
from kgym.curation.messages import chat
from kgym.curation.normalise import Normalised, normalise, scaled_task
from kgym.curation.report import FunnelReport
from kgym.curation.rows import read_source
from kgym.curation.verification import Backend, verify_all
from kgym.tasks import Task


class Progress(Protocol):
    def stage(self, name: str, total: int | None = None) -> None: ...
    def advance(self, n: int = 1) -> None: ...


class _Quiet:
    def stage(self, name: str, total: int | None = None) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass


@dataclass
class Fate:
    """Where one source row went: kept (dropped is None) or the reason it left."""

    index: int
    uuid: str
    dropped: Drop | None = None
    detail: str = ""
    evaluation_id: str | None = None
    answer_mode: str | None = None  # triton | hybrid, by the verdict (verified rows)
    ast_hybrid: bool | None = None


@dataclass
class _Item:
    norm: Normalised
    fate: Fate
    ast_hybrid: bool = False
    task: Task | None = None
    request: EvalRequest | None = None
    verdict: Verdict | None = None


@dataclass
class CurationResult:
    report: FunnelReport
    fates: list[Fate]  # one per source row, in file order
    rows: list[DatasetRow] = field(default_factory=list)
    dataset: Path | None = None
    report_json: Path | None = None
    plot: Path | None = None

    def fate_of(self, uuid: str) -> Fate:
        return next(f for f in self.fates if f.uuid == uuid)


def _request(item: _Item, config: CurateConfig, hybrid: bool) -> EvalRequest | str:
    task = scaled_task(item.norm, config.input, target_elements=config.target_elements, size=config.size,
                       seed=config.seed, hybrid=hybrid)
    if isinstance(task, str):
        return task
    item.task = task
    return EvalRequest.for_task(task, item.norm.answer, label=item.fate.uuid)


def _verify(items: list[_Item], backend: Backend, config: CurateConfig, report: FunnelReport,
            progress: Progress, what: str) -> None:
    progress.stage(what, total=len(items))
    result = verify_all([i.request for i in items], backend, on_result=lambda _r, _v: progress.advance(),
                        on_resumed=progress.advance)
    for i in items:
        i.verdict = result.verdicts.get(i.request.evaluation_id)
    report.resumed += result.resumed
    report.verified += result.verified
    report.verify_wall_s += result.wall_s


def curate(config: CurateConfig, backend: Backend, *, progress: Progress | None = None,
           counter=None) -> CurationResult:
    """Run the funnel. `counter` is a `length.TokenCounter` (default: built from config.tokenizer)."""
    t0 = time.perf_counter()
    progress = progress or _Quiet()
    report = FunnelReport()

    # 1. rows
    source = read_source(config.input)
    fates = [Fate(s.row.index, s.uuid) for s in source]
    answered = []
    for s, fate in zip(source, fates):
        if s.answer_key is None:
            fate.dropped = Drop.NO_ANSWER
            report.drop(Drop.NO_ANSWER)
        else:
            answered.append((s, fate))
    report.counts[Stage.SOURCE_ANSWERS] = len(answered)
    report.counts[Stage.SOURCE_MODULES] = len({s.module_key for s, _ in answered})

    # 4. decontaminate (first: see funnel_names.py)
    if config.kernelbench:
        from kgym.curation.decontam import Contamination

        check = Contamination(config.kernelbench, config.kernelbench_levels, config.jaccard_threshold)
        clean = []
        for s, fate in answered:
            near = check.nearest(s.row.python_code, key=s.module_key)
            if near.contaminated:
                fate.dropped, fate.detail = Drop.CONTAMINATED, f"{near.problem} (Jaccard {near.score})"
                report.drop(Drop.CONTAMINATED)
            else:
                clean.append((s, fate))
        answered = clean
    else:
        report.skipped.append("decontaminate (no kernelbench checkout given)")
    report.counts[Stage.DECONTAMINATED] = len(answered)

    # 2. normalise
    progress.stage("normalise", total=len(answered))
    items: list[_Item] = []
    for s, fate in answered:
        got = normalise(s)
        progress.advance()
        if isinstance(got, str):
            fate.dropped, fate.detail = Drop.NOT_NORMALISED, got
            report.drop(Drop.NOT_NORMALISED)
        else:
            items.append(_Item(got, fate))
    report.counts[Stage.NORMALISED] = len(items)

    # 3. duplicates and the cap per module
    items, dropped = cap_per_module(items, config.max_per_module, module_key=lambda i: i.norm.source.module_key,
                                    answer_key=lambda i: i.norm.source.answer_key)
    for i, why in dropped:
        i.fate.dropped = why
        report.drop(why)
    report.counts[Stage.CAPPED] = len(items)

    # 5-6. classify by AST, scale, build the requests
    ready = []
    for i in items:
        # The row's own answer: the normalised one's ModelNew only subclasses it (no forward() to read).
        i.ast_hybrid = i.fate.ast_hybrid = ast_hybrid(i.norm.source.row.triton_code)
        req = _request(i, config, hybrid=i.ast_hybrid)
        if isinstance(req, str):
            i.fate.dropped, i.fate.detail = Drop.NOT_NORMALISED, req
            report.drop(Drop.NOT_NORMALISED)
            continue
        i.request = req
        ready.append(i)

    # 7. verify (then once more as hybrids where only the isolation gate stood in the way)
    _verify(ready, backend, config, report, progress, "verify")
    if config.hybrid_retry:
        again = [i for i in ready if i.verdict is not None and retry_as_hybrid(i.verdict, i.ast_hybrid)]
        for i in again:
            i.request = _request(i, config, hybrid=True)
        if again:
            _verify(again, backend, config, report, progress, "verify as hybrid")
    verified: list[_Item] = []
    for i in ready:
        v = i.verdict
        i.fate.evaluation_id = i.request.evaluation_id
        if v is None or v.error is not None:
            i.fate.dropped, i.fate.detail = Drop.FARM_ERROR, (v.error if v else "no verdict")
            report.drop(Drop.FARM_ERROR)
        elif not v.passed:
            i.fate.dropped, i.fate.detail = Drop.FAILED, f"{v.gate}: {v.reason[:200]}"
            report.drop(f"{Drop.FAILED}:{v.gate}")
        else:
            i.fate.answer_mode = answer_mode(v)
            verified.append(i)
            report.device = report.device or v.device
    report.counts[Stage.VERIFIED] = len(verified)

    # 8-9. labels, gym replay rows
    rows: list[DatasetRow] = []
    for i in verified:
        lab = speed_labels(i.verdict)
        src = i.norm.source
        rows.append(DatasetRow(messages=chat(config.system_prompt, i.task.prompt(), i.norm.answer), source="kernelbook",
                               family=i.task.spec.family, task_id=i.task.task_id,
                               evaluation_id=i.request.evaluation_id, answer_mode=i.fate.answer_mode,
                               ast_hybrid=i.ast_hybrid, entry_point=src.row.entry_point, uuid=src.uuid,
                               module_key=src.module_key, speedup_eager=lab.speedup_eager,
                               speedup_compile=lab.speedup_compile, faster_than_eager=lab.faster_than_eager,
                               faster_than_compile=lab.faster_than_compile))
    owners: list[Fate | None] = [i.fate for i in verified]
    if config.replay:
        from kgym.curation.episode_replay import replay_rows

        progress.stage("gym replay")
        replayed, counts = replay_rows(config.replay, config.replay_per_family)
        report.replay = {"episodes": counts.episodes, "duplicates": counts.duplicates,
                         "unbuildable": counts.unbuildable, "over_cap": counts.over_cap, **{
                             f"family:{k}": v for k, v in sorted(counts.by_family.items())}}
        for r in replayed:
            lab_e = None if r.speedup_eager is None else r.speedup_eager > 1.0
            lab_c = None if r.speedup_compile is None else r.speedup_compile > 1.0
            rows.append(DatasetRow(messages=chat(config.system_prompt, r.prompt, r.answer), source="gym",
                                   family=r.family, task_id=r.task_id, evaluation_id=r.evaluation_id,
                                   answer_mode=r.answer_mode, speedup_eager=r.speedup_eager,
                                   speedup_compile=r.speedup_compile, faster_than_eager=lab_e,
                                   faster_than_compile=lab_c))
            owners.append(None)
    else:
        report.skipped.append("gym replay (no RL records given)")

    # 10. length
    if counter is None and config.tokenizer:
        from kgym.curation.length import TokenCounter

        counter = TokenCounter(config.tokenizer)
    if counter is not None:
        progress.stage("length", total=len(rows))
        fitting = []
        for r, fate in zip(rows, owners):
            n = counter.count(r.messages)
            progress.advance()
            if n <= config.max_tokens:
                fitting.append(replace(r, n_tokens=n))
                continue
            report.drop(Drop.TOO_LONG)
            if fate is not None:
                fate.dropped, fate.detail = Drop.TOO_LONG, f"{n} tokens > {config.max_tokens}"
        rows = fitting
    else:
        report.skipped.append("length filter (no tokenizer given)")

    # 11. counts, dataset, report, plot
    report.counts[Stage.KEPT] = sum(r.source == "kernelbook" for r in rows)
    report.counts[Stage.GYM_ROWS] = sum(r.source == "gym" for r in rows)
    report.counts[Stage.ROWS] = len(rows)
    report.labels[Label.HYBRID] = sum(r.answer_mode == "hybrid" for r in rows)
    report.labels[Label.FASTER_THAN_EAGER] = sum(bool(r.faster_than_eager) for r in rows)
    report.labels[Label.FASTER_THAN_COMPILE] = sum(bool(r.faster_than_compile) for r in rows)
    out = Path(config.out)
    result = CurationResult(report=report, fates=fates, rows=rows)
    result.dataset = write_dataset(rows, out / "dataset.parquet")
    report.wall_s = time.perf_counter() - t0
    result.report_json = report.write_json(out / "funnel.json")
    from kgym.curation.plot import write_plot

    result.plot = write_plot(report, out / "funnel.png")
    return result
