"""The funnel's typed configuration (`CurateConfig`): one field per knob of the curation stages.

Covers what the funnel does; where verification runs and where its records go belong to the
backend (`verification.py`, the farm backend of `jobs/curate.py`), and the job's TOML (with its
[records], [farm], [verify] sections) is `jobs/curate.py`'s `CurateJobConfig`, which holds this one
as its [curate] section. Every field is a setting (`kgym.settings.option`: its doc is what
`--help-config` prints), checked in `__post_init__`. Does not run anything (`pipeline.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kgym.curation.messages import DEFAULT_SYSTEM
from kgym.settings import option


@dataclass(frozen=True)
class CurateConfig:
    input: str = option(doc="KernelBook-layout file (.parquet or .jsonl); its path is part of each task spec, "
                        "so keep it the same to resume")
    out: str = option("out/curation", "dataset.parquet, funnel.json and funnel.png are written here")
    kernelbench: str | None = option(None, "a KernelBench checkout; omit: no decontamination (the report says so)")
    kernelbench_levels: tuple[int, ...] = option((1, 2), "the checkout's levels to decontaminate against")
    jaccard_threshold: float = option(0.6, "drop a module whose token-set Jaccard to a problem is above this")
    max_per_module: int = option(2, "answers kept per module (the first ones in the file)")
    target_elements: int = option(1 << 20, "inputs scaled to about this many elements (the study: ~1M)")
    size: str = option("full", "the tasks' size label (full at 1M elements; tiny for the CPU interpreter)")
    seed: int = option(0, "task seed: input distribution and the verifier's public seed")
    hybrid_retry: bool = option(True, "verify a pure-Triton answer that fails only isolation again as a hybrid")
    replay: tuple[str, ...] = option((), "RL records (run dirs or a records root) to replay successful episodes from")
    replay_per_family: int = option(40, "replayed episodes kept per task family (the study: 40)")
    tokenizer: str | None = option(None, "the target model's tokenizer (path or cached id); omit: no length filter")
    max_tokens: int = option(4096, "longest chat kept, in the target tokenizer's tokens (the study: 4,096)")
    system_prompt: str = option(DEFAULT_SYSTEM, "the system turn of every row")

    def __post_init__(self) -> None:
        if self.max_per_module < 1 or self.replay_per_family < 0 or self.max_tokens < 1:
            raise ValueError("max_per_module and max_tokens must be >= 1, replay_per_family >= 0")
        if not 0.0 < self.jaccard_threshold <= 1.0:
            raise ValueError("jaccard_threshold must be in (0, 1]")
        if self.target_elements < 1:
            raise ValueError("target_elements must be >= 1")
