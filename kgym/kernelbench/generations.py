"""Answers in: a JSONL of generations, and what each becomes for the verifier.

One object a line: `{"level": 1, "problem_id": 19, "model": "sft", "answer": "<model text>",
"sample": 0}` (`sample` optional, default 0; `text`, `completion` or `response` are read when
`answer` is absent). The candidate is the answer's last closed python fence
(`kgym.answers.extract_code`), the same rule as everywhere in kgym; an answer without one
is recorded as failing the compile gate, never sent to the farm. Covers reading, checking and
turning a generation into (task dict, candidate); does not verify or score.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgym.answers import Extraction, extract_code
from kgym.kernelbench.checkout import KernelBenchError, Problem

ANSWER_KEYS = ("answer", "text", "completion", "response")


@dataclass(frozen=True)
class Generation:
    level: int
    problem_id: int
    model: str
    answer: str
    sample: int = 0

    @property
    def key(self) -> tuple[int, int]:
        return (self.level, self.problem_id)


def parse_generation(obj: dict[str, Any], where: str = "row") -> Generation:
    missing = [k for k in ("level", "problem_id", "model") if obj.get(k) is None]
    if missing:
        raise KernelBenchError(f"{where}: missing {missing}")
    answer = next((obj[k] for k in ANSWER_KEYS if obj.get(k) is not None), None)
    if answer is None:
        raise KernelBenchError(f"{where}: no answer text (one of {list(ANSWER_KEYS)})")
    try:
        return Generation(level=int(obj["level"]), problem_id=int(obj["problem_id"]), model=str(obj["model"]),
                          answer=str(answer), sample=int(obj.get("sample") or 0))
    except (TypeError, ValueError) as e:
        raise KernelBenchError(f"{where}: {e}") from None


def read_generations(path: str | Path) -> list[Generation]:
    """Every generation of a JSONL file; a (model, level, problem, sample) given twice is an error."""
    p = Path(path)
    if not p.is_file():
        raise KernelBenchError(f"generations file {str(p)!r} does not exist")
    out, seen = [], set()
    for n, line in enumerate(p.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise KernelBenchError(f"{p}:{n}: not JSON: {e}") from None
        g = parse_generation(obj, f"{p}:{n}")
        k = (g.model, g.level, g.problem_id, g.sample)
        if k in seen:
            raise KernelBenchError(f"{p}:{n}: model {g.model!r} level {g.level} problem {g.problem_id} "
                                   f"sample {g.sample} given twice")
        seen.add(k)
        out.append(g)
    return out


def task_for(problem: Problem, generation: Generation, *, hybrid: bool) -> dict[str, Any]:
    """The record's task dict: the problem's, plus which model and sample answered (so two models
    giving the same text still get two evaluation ids and two rows)."""
    task = dict(problem.task())
    task.update(answer_mode="hybrid" if hybrid else "triton", level=problem.level, problem_id=problem.problem_id,
                model=generation.model, sample=generation.sample)
    return task


def request_parts(problem: Problem, generation: Generation, *, hybrid: bool) -> tuple[dict[str, Any], Extraction]:
    """(task dict, extraction): the farm verifies `extraction.code` when `extraction.ok`."""
    if generation.key != problem.key:
        raise KernelBenchError(f"generation for {generation.key} paired with problem {problem.key}")
    return task_for(problem, generation, hybrid=hybrid), extract_code(generation.answer)
