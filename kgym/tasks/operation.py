"""`Operation`: how a family declares one registered task, and how its sources are assembled.

An operation's sources are real Python files beside its family (`kgym/tasks/families/<family>/`):
- the reference, in KernelBench form, whose module-level constants (`rows = 64`, `scale = 1.0`) are
  the shape and distribution knobs: `make` rewrites those lines with the values drawn from the seed;
- the reference Triton solution (`ModelNew`), shape-generic, with the inner math between
  `# kgym-scaffold: begin <what to write>` and `# kgym-scaffold: end` markers: the scaffold stage
  shows the model the solution with that region cut out;
- for the epilogue stage, a hybrid solution that keeps the library GEMM/conv and writes the fused
  tail in Triton (its tail is the marked region);
- known-wrong variants, subtly wrong the way models get it wrong (a missed branch, a dropped term).
Operations of one family that differ in a line or two (ReLU and GELU) share files: a `{{slot}}` in a
file is filled from the operation's `slots`.
Does not draw seeds or hold the registry (`registry.py`), and does not verify (`check.py`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kgym.tasks.shapes import Budget
from kgym.tasks.spec import STAGES, TaskError, TaskSpec

MAX_DIM = (1 << 31) - 1
SCAFFOLD_BEGIN = "# kgym-scaffold: begin"
SCAFFOLD_END = "# kgym-scaffold: end"


def render_constants(source: str, values: dict[str, float | int], required: set[str], origin: str) -> str:
    """Rewrite module-level `name = ...` lines with `values`. Names in `required` must appear exactly
    once; the others are rewritten where present."""
    for name, value in values.items():
        pattern = re.compile(rf"^{re.escape(name)} = [^\n]*$", re.MULTILINE)
        hits = len(pattern.findall(source))
        if hits == 0 and name not in required:
            continue
        if hits != 1:
            raise TaskError(f"{origin}: module constant {name!r} must be defined once at column 0, found {hits}")
        source = pattern.sub(f"{name} = {value!r}", source)
    return source


_SLOT = re.compile(r"\{\{(\w+)\}\}")


def fill_slots(source: str, slots: dict[str, str], origin: str) -> str:
    """Replace each `{{name}}` with `slots[name]`; a slot without a value is an error."""
    missing = sorted({m for m in _SLOT.findall(source) if m not in slots})
    if missing:
        raise TaskError(f"{origin}: no value for slot(s) {missing}")
    return _SLOT.sub(lambda m: slots[m.group(1)], source)


def cut_scaffold(source: str, origin: str) -> str:
    """The solution with every marked region replaced by a TODO naming what belongs there."""
    out: list[str] = []
    lines = source.splitlines()
    i, regions = 0, 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith(SCAFFOLD_BEGIN):
            what = stripped[len(SCAFFOLD_BEGIN):].strip(" :") or "the missing code"
            indent = line[: len(line) - len(line.lstrip())]
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(SCAFFOLD_END):
                j += 1
            if j == len(lines):
                raise TaskError(f"{origin}: scaffold region opened at line {i + 1} is never closed")
            out.append(f"{indent}# TODO: write {what}")
            out.append(f"{indent}# (your code here)")
            regions += 1
            i = j + 1
            continue
        out.append(line)
        i += 1
    if regions == 0:
        raise TaskError(f"{origin}: no '{SCAFFOLD_BEGIN}' region to cut a scaffold from")
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class Operation:
    """One registered operation of a family. Files are names inside `folder`."""

    name: str  # unique across families; the task id is f"{name}-v{version}"
    family: str
    folder: Path
    description: str  # one line: what the reference computes
    reference: str  # reference file (KernelBench form)
    solution: str  # reference Triton answer for full/small/scaffold
    shapes: Callable[[random.Random, Budget], dict[str, int]]
    wrong: str | None = None  # a known-wrong answer (may be the solution's file with `wrong_slots`)
    stages: tuple[str, ...] = ("full",)
    hybrid: bool = False  # every stage may make one cuBLAS/cuDNN call
    epilogue: str | None = None  # hybrid answer for the epilogue stage
    check: Callable[[dict[str, int]], str | None] | None = None  # why a shape set is impossible
    slots: dict[str, str] = field(default_factory=dict)  # values for `{{name}}` in the files
    wrong_slots: dict[str, str] = field(default_factory=dict)  # slot values that make `wrong` wrong
    version: int = 1

    def __post_init__(self) -> None:
        bad = [s for s in self.stages if s not in STAGES]
        if bad or "full" not in self.stages:
            raise ValueError(f"{self.name}: stages must include 'full' and be among {STAGES}, got {self.stages}")
        if ("epilogue" in self.stages) != (self.epilogue is not None):
            raise ValueError(f"{self.name}: an epilogue stage needs an epilogue solution and vice versa")

    @property
    def task_id(self) -> str:
        return f"{self.name}-v{self.version}"

    # -- what make() calls; KernelBook's operation overrides these --------------------------------
    def draw_shapes(self, rng: random.Random, budget: Budget, spec_source: str | None) -> dict[str, int]:
        return self.shapes(rng, budget)

    def validate(self, shapes: dict[str, int], expected: set[str]) -> None:
        if set(shapes) != expected:
            raise TaskError(f"{self.task_id}: shapes must name exactly {sorted(expected)}, got {sorted(shapes)}")
        for k, v in shapes.items():
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_DIM:
                raise TaskError(f"{self.task_id}: shape {k}={v!r} must be an integer in [1, 2**31)")
        if self.check is not None:
            why = self.check(shapes)
            if why:
                raise TaskError(f"{self.task_id}: impossible shapes {shapes}: {why}")

    def read(self, name: str, wrong: bool = False) -> str:
        path = self.folder / name
        try:
            text = path.read_text()
        except OSError as e:
            raise TaskError(f"{self.task_id}: cannot read {path}: {e}") from None
        slots = {**self.slots, **self.wrong_slots} if wrong else self.slots
        return fill_slots(text, slots, f"{self.family}/{name}")

    def reference_source(self, spec: TaskSpec) -> str:
        values: dict[str, float | int] = {**spec.shapes, **spec.distribution}
        return render_constants(self.read(self.reference), values, set(spec.shapes),
                                f"{self.family}/{self.reference}")

    def solution_source(self, spec: TaskSpec) -> str:
        return self.read(self.epilogue if spec.stage == "epilogue" else self.solution)

    def wrong_source(self, spec: TaskSpec) -> str | None:
        return self.read(self.wrong, wrong=True) if self.wrong else None

    def scaffold_source(self, spec: TaskSpec) -> str | None:
        if spec.stage not in ("scaffold", "epilogue"):
            return None
        name = self.epilogue if spec.stage == "epilogue" else self.solution
        return cut_scaffold(self.solution_source(spec), f"{self.family}/{name}")

    def describe(self, spec: TaskSpec) -> str:
        return self.description
