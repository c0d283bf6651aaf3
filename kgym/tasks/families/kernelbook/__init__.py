"""KernelBook family: real modules read from a KernelBook-layout file, in KernelBench form.

One registered operation, `kernelbook-v1`; the task's seed picks the row uniformly over the whole
file (the study's v8 audit found a seed bug that only ever sampled 69 of 966 rows), and a batch
factor that scales the row's inputs to the size asked for. The file is the `source` given to
`make` (Parquet or JSONL); without one, the bundled sample of four modules written for kgym's tests.
Shapes recorded in the spec: `row` (index in the file) and `batch` (the leading-dimension factor).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from kgym.tasks.families.kernelbook.dataset import load_rows
from kgym.tasks.families.kernelbook.normalise import answer_source, batch_factor, probe, reference_source
from kgym.tasks.operation import Operation
from kgym.tasks.shapes import Budget, dim
from kgym.tasks.spec import TaskError, TaskSpec

HERE = Path(__file__).parent


@dataclass(frozen=True)
class KernelBookOperation(Operation):
    def draw_shapes(self, rng: random.Random, budget: Budget, spec_source: str | None) -> dict[str, int]:
        rows = load_rows(spec_source)
        row = rows[rng.randrange(len(rows))]
        # "About 1M elements" at full size: between the budget's floor and twice it.
        target = dim(rng, budget.lo, min(budget.hi, 2 * budget.lo), awkward=0.0)
        return {"row": row.index, "batch": batch_factor(probe(row), target)}

    def validate(self, shapes: dict[str, int], expected: set[str]) -> None:
        if set(shapes) != {"row", "batch"}:
            raise TaskError(f"kernelbook-v1: shapes must name exactly ['batch', 'row'], got {sorted(shapes)}")
        for k, lo in (("row", 0), ("batch", 1)):
            v = shapes[k]
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise TaskError(f"kernelbook-v1: {k}={v!r} must be an integer >= {lo}")

    def _row(self, spec: TaskSpec):
        rows = load_rows(spec.source)
        if spec.shapes["row"] >= len(rows):
            raise TaskError(f"kernelbook: row {spec.shapes['row']} is out of range: the file has {len(rows)} rows")
        return rows[spec.shapes["row"]]

    def reference_source(self, spec: TaskSpec) -> str:
        return reference_source(self._row(spec), spec.shapes["batch"], spec.distribution["scale"],
                                spec.distribution["shift"])

    def solution_source(self, spec: TaskSpec) -> str:
        row = self._row(spec)
        code = answer_source(row, row.triton_code)
        if code is None:
            raise TaskError(f"kernelbook row {row.index} ({row.entry_point}) has no triton_code to serve as "
                            "the reference answer")
        return code

    def wrong_source(self, spec: TaskSpec) -> str | None:
        row = self._row(spec)
        return answer_source(row, row.wrong_triton_code)

    def describe(self, spec: TaskSpec) -> str:
        row = self._row(spec)
        return f"KernelBook module {row.entry_point} (row {row.index}, {row.repo_name or 'unknown repo'})"


OPERATIONS = [
    KernelBookOperation(name="kernelbook", family="kernelbook", folder=HERE,
                        description="a real PyTorch module from KernelBook",
                        reference="sample.jsonl", solution="sample.jsonl", wrong="sample.jsonl",
                        shapes=lambda rng, budget: {}),
]
