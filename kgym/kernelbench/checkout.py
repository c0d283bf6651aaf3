"""A KernelBench checkout on disk: its problems, read at run time from the path the user gives.

Layout: `<root>/KernelBench/level<N>/<id>_<Name>.py` (the repository), or `<root>/level<N>/...` when
pointed at the dataset folder itself. A problem is its level, its numeric id, its name and its
source (a KernelBench-form module: `Model`, `get_inputs`, `get_init_inputs`). Covers finding and
reading problems only; prompts come from the checkout's own code (`checkout_prompts.py`). Nothing of
KernelBench is copied into kgym.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_FILE = re.compile(r"^(\d+)_(.+)\.py$")


class KernelBenchError(ValueError):
    """A checkout, problem or file that cannot be used (the user's error, with what is missing)."""


@dataclass(frozen=True)
class Problem:
    level: int
    problem_id: int
    name: str
    path: str  # absolute path of the problem file
    source: str

    @property
    def key(self) -> tuple[int, int]:
        return (self.level, self.problem_id)

    def task(self) -> dict[str, object]:
        """The record's task dict for this problem (family `kernelbench`, stage `level<N>`)."""
        return {"task_id": f"kernelbench-l{self.level}-{self.problem_id}", "family": "kernelbench",
                "operation": self.name, "stage": f"level{self.level}", "seed": 0, "size": "full",
                "dtype": "float32", "answer_mode": "triton"}


class Checkout:
    def __init__(self, root: str | Path):
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise KernelBenchError(f"KernelBench checkout {str(self.root)!r} is not a directory")
        for base in (self.root / "KernelBench", self.root):
            if any(base.glob("level*/")):
                self.dataset = base
                break
        else:
            raise KernelBenchError(f"{self.root}: no KernelBench/level<N>/ folders (point at a KernelBench checkout)")

    def levels(self) -> list[int]:
        found = []
        for d in self.dataset.glob("level*"):
            suffix = d.name[len("level"):]
            if d.is_dir() and suffix.isdigit():
                found.append(int(suffix))
        return sorted(found)

    def problems(self, level: int, ids: list[int] | None = None) -> list[Problem]:
        """The level's problems in id order; `ids` picks some (an unknown id is an error)."""
        folder = self.dataset / f"level{level}"
        if not folder.is_dir():
            raise KernelBenchError(f"{self.dataset}: no level{level}/ folder (levels here: {self.levels()})")
        out = []
        for f in folder.iterdir():
            m = _FILE.match(f.name)
            if m and f.is_file():
                out.append(Problem(level, int(m.group(1)), m.group(2), str(f), f.read_text()))
        out.sort(key=lambda p: p.problem_id)
        if ids is not None:
            by_id = {p.problem_id: p for p in out}
            missing = sorted(set(ids) - set(by_id))
            if missing:
                raise KernelBenchError(f"level {level}: no problem with id(s) {missing}")
            out = [by_id[i] for i in sorted(set(ids))]
        return out

    def problem(self, level: int, problem_id: int) -> Problem:
        return self.problems(level, [problem_id])[0]
