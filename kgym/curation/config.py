"""The funnel's typed configuration (`CurateConfig`): one field per knob of the curation stages.

Covers what the funnel does; where verification runs and where its records go belong to the
backend (`verification.py`, the farm backend of `jobs/curate.py`), and the job's TOML (with its
[records], [farm], [verify] sections) is `jobs/curate.py`'s `CurateJobConfig`, which holds this one
as its [curate] section. Every field is documented here and checked in `__post_init__`. Does not
run anything (`pipeline.py`).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field
from typing import Any

from kgym.curation.messages import DEFAULT_SYSTEM


def _field(default: Any = MISSING, doc: str = "") -> Any:
    # The doc sits in the field's metadata, where `jobs.config.describe` (--help-config) reads it.
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class CurateConfig:
    input: str = _field(doc="KernelBook-layout file (.parquet or .jsonl); its path is part of each task spec, "
                        "so keep it the same to resume")
    out: str = _field("out/curation", "dataset.parquet, funnel.json and funnel.png are written here")
    kernelbench: str | None = _field(None, "a KernelBench checkout; omit: no decontamination (the report says so)")
    kernelbench_levels: tuple[int, ...] = _field((1, 2), "the checkout's levels to decontaminate against")
    jaccard_threshold: float = _field(0.6, "drop a module whose token-set Jaccard to a problem is above this")
    max_per_module: int = _field(2, "answers kept per module (the first ones in the file)")
    target_elements: int = _field(1 << 20, "inputs scaled to about this many elements (the study: ~1M)")
    size: str = _field("full", "the tasks' size label (full at 1M elements; tiny for the CPU interpreter)")
    seed: int = _field(0, "task seed: input distribution and the verifier's public seed")
    hybrid_retry: bool = _field(True, "verify a pure-Triton answer that fails only isolation again as a hybrid")
    replay: tuple[str, ...] = _field((), "RL records (run dirs or a records root) to replay successful episodes from")
    replay_per_family: int = _field(40, "replayed episodes kept per task family (the study: 40)")
    tokenizer: str | None = _field(None, "the target model's tokenizer (path or cached id); omit: no length filter")
    max_tokens: int = _field(4096, "longest chat kept, in the target tokenizer's tokens (the study: 4,096)")
    system_prompt: str = _field(DEFAULT_SYSTEM, "the system turn of every row")

    def __post_init__(self) -> None:
        if self.max_per_module < 1 or self.replay_per_family < 0 or self.max_tokens < 1:
            raise ValueError("max_per_module and max_tokens must be >= 1, replay_per_family >= 0")
        if not 0.0 < self.jaccard_threshold <= 1.0:
            raise ValueError("jaccard_threshold must be in (0, 1]")
        if self.target_elements < 1:
            raise ValueError("target_elements must be >= 1")
