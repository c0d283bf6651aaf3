"""`TaskSpec`: what a procedural task is, as plain serialisable data, and `TaskError`.

A spec names one instance of a task: the registered operation (by versioned id), the curriculum
stage, the seed that drew its shapes and input distribution, and the size knob. It holds no source
code; `kgym.tasks.make` turns a spec into a `Task` with its reference, solution and prompts.
Does not know any family: those live in `kgym/tasks/families/`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

# Curriculum stages. full: the unassisted task at target size; small: the same task on smaller
# shapes; scaffold: host code and tile offsets given, the inner math left to the model; epilogue: the
# library GEMM/conv kept, the fused tail written in Triton.
STAGES = ("full", "small", "scaffold", "epilogue")
# The size knob: full spans 1M-32M elements (memory-bound on a GPU), small 64K-1M, tiny is for the
# Triton interpreter on a CPU.
SIZES = ("tiny", "small", "full")
# triton: PyTorch may not compute in forward(); hybrid: exactly one cuBLAS/cuDNN call is allowed.
ANSWER_MODES = ("triton", "hybrid")
MAX_SEED = (1 << 63) - 1
SPEC_VERSION = 1


class TaskError(ValueError):
    """A task cannot be made as asked; the message names the problem and what to do."""


def check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TaskError(f"seed must be an integer in [0, 2**63), got {seed!r} ({type(seed).__name__})")
    if not 0 <= seed <= MAX_SEED:
        raise TaskError(f"seed must be in [0, 2**63), got {seed}")
    return seed


@dataclass(frozen=True)
class TaskSpec:
    task_id: str  # "softmax-v1": the operation's registered id, version included
    family: str  # "softmax"
    operation: str  # "softmax"
    stage: str  # one of STAGES
    seed: int  # the procedural seed: shapes, input distribution, and the public parameter seed
    size: str  # one of SIZES
    dtype: str  # "float32"
    shapes: dict[str, int] = field(default_factory=dict)  # the reference's shape constants
    distribution: dict[str, float] = field(default_factory=dict)  # input recipe: scale, shift
    answer_mode: str = "triton"  # one of ANSWER_MODES
    source: str | None = None  # the data file a family reads its modules from (KernelBook)
    spec_version: int = SPEC_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TaskSpec:
        d = dict(d)
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise TaskError(f"unknown TaskSpec field(s) {sorted(unknown)}")
        return cls(**d)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @property
    def key(self) -> str:
        """A stable short hash of the spec: the same spec gives the same key on any machine."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    @property
    def hybrid(self) -> bool:
        return self.answer_mode == "hybrid"
