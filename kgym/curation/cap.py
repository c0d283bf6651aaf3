"""Stage 3 of the funnel: one copy of each answer, and at most `max_per_module` answers per module.

Rows are taken in file order, so the first answers of a module are the ones kept and a re-run keeps
the same ones. An answer whose key (`rows.code_key`) was already kept for the same module is a
duplicate; an answer past the cap is over it. Does not judge the answers (the verifier does).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import TypeVar

from kgym.curation.funnel_names import Drop

T = TypeVar("T")


def cap_per_module(items: Iterable[T], max_per_module: int, *, module_key,
                   answer_key) -> tuple[list[T], list[tuple[T, Drop]]]:
    """(kept, dropped with the reason) for items in order; `module_key(item)`/`answer_key(item)` name them."""
    if max_per_module < 1:
        raise ValueError("max_per_module must be at least 1")
    seen: dict[str, set[str]] = defaultdict(set)
    kept: list[T] = []
    dropped: list[tuple[T, Drop]] = []
    for item in items:
        answers = seen[module_key(item)]
        if answer_key(item) in answers:
            dropped.append((item, Drop.DUPLICATE))
        elif len(answers) >= max_per_module:
            dropped.append((item, Drop.OVER_CAP))
        else:
            answers.add(answer_key(item))
            kept.append(item)
    return kept, dropped
