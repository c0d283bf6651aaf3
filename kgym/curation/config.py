"""The curation job's typed configuration (`CurateConfig`), one field per knob of the funnel.

Read from TOML by `toml_config.load` (see `jobs/configs/curate_sample.toml`); every field is
documented here and checked in `__post_init__`. Covers the funnel's knobs and where the farm is;
does not run anything (`pipeline.py`, `jobs/curate.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgym.curation.messages import DEFAULT_SYSTEM

BACKENDS = ("local", "farm")


@dataclass(frozen=True)
class FarmSettings:
    """Where verification runs. local: one Verifier in this process; farm: a Ray VerifierPool."""

    backend: str = "farm"
    workers: int | None = None  # farm: None = one per GPU of the cluster, else one per CPU
    max_in_flight: int = 2
    max_attempts: int = 3
    spares: int | None = None  # warm candidate processes per worker (None: the worker's default)
    call_timeout_s: float = 1800.0
    ray_address: str | None = None  # None: $RAY_ADDRESS (ray job submit) or an embedded instance
    ray_num_cpus: int | None = None  # embedded instance only
    metrics_port: int | None = None  # None: no Prometheus exporter; 0: any free port

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"farm.backend {self.backend!r}: one of {', '.join(BACKENDS)}")


@dataclass(frozen=True)
class CurateConfig:
    input: str  # KernelBook-layout file (.parquet or .jsonl); its path is part of each task spec
    out: str = "out/curation"  # dataset.parquet, funnel.json and funnel.png are written here
    records: str = "out/records"  # verdicts go to RECORDS/RUN_ID (kgym's records layout)
    run_id: str = "curate"  # re-running the same run id skips every row already verified
    kernelbench: str | None = None  # a KernelBench checkout; None skips decontamination (reported)
    kernelbench_levels: tuple[int, ...] = (1, 2)
    jaccard_threshold: float = 0.6  # drop a module above this token-set Jaccard to any problem
    max_per_module: int = 2  # answers kept per module
    target_elements: int = 1 << 20  # inputs scaled to about this many elements (the study: ~1M)
    size: str = "full"  # the tasks' size label (full at 1M; tiny for the interpreter)
    seed: int = 0  # task seed: input distribution and the verifier's public seed
    hybrid_retry: bool = True  # verify a pure-Triton answer that fails isolation again as a hybrid
    replay: tuple[str, ...] = ()  # RL records (a run dir or a records root) to replay successes from
    replay_per_family: int = 40
    tokenizer: str | None = None  # the target model's tokenizer; None skips the length filter (reported)
    max_tokens: int = 4096
    system_prompt: str = DEFAULT_SYSTEM
    verify: dict[str, Any] = field(default_factory=dict)  # kgym.verify.VerifyConfig fields
    farm: FarmSettings = field(default_factory=FarmSettings)

    def __post_init__(self) -> None:
        if self.max_per_module < 1 or self.replay_per_family < 0 or self.max_tokens < 1:
            raise ValueError("max_per_module and max_tokens must be >= 1, replay_per_family >= 0")
        if not 0.0 < self.jaccard_threshold <= 1.0:
            raise ValueError("jaccard_threshold must be in (0, 1]")
        if self.target_elements < 1:
            raise ValueError("target_elements must be >= 1")
        unknown = set(self.verify) - _verify_fields()
        if unknown:
            raise ValueError(f"[verify]: not VerifyConfig fields: {sorted(unknown)}")


def _verify_fields() -> set[str]:
    from dataclasses import fields

    from kgym.verify import VerifyConfig

    return {f.name for f in fields(VerifyConfig)}
