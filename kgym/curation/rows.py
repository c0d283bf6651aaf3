"""Stage 1 of the funnel: the answers of a KernelBook-layout file, each with its module's key.

A KernelBook file holds one row per (module, answer): several rows share a module when it has
several answers, and the same module is often copied across repositories. A module's key is the
hash of its parsed source (`ast.dump`), so formatting and comments do not make two copies count as
two modules; an answer's key is built the same way. Reading the file is `kgym.tasks`' KernelBook
reader; this module does not run any code (`normalise.py` does).
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass

from kgym.tasks.families.kernelbook.dataset import KernelBookRow, load_rows


def code_key(source: str) -> str:
    """16 hex digits naming a source up to formatting and comments (its text when it does not parse)."""
    try:
        canonical = ast.dump(ast.parse(source))
    except (SyntaxError, ValueError):
        canonical = "\n".join(line.rstrip() for line in source.strip().splitlines())
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class SourceRow:
    row: KernelBookRow
    module_key: str
    answer_key: str | None  # None: the row has no answer

    @property
    def uuid(self) -> str:
        return self.row.uuid


def read_source(path: str) -> list[SourceRow]:
    """Every row of the file in file order (rows without an answer included: the funnel counts them)."""
    return [SourceRow(r, code_key(r.python_code), code_key(r.triton_code) if r.triton_code else None)
            for r in load_rows(path)]
