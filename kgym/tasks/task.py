"""`Task`: one instance of a registered operation, everything a job needs to pose and judge it.

A task is its spec plus text: the reference in KernelBench form (runs through `kgym verify`
unchanged), the reference Triton solution, a known-wrong answer, the scaffold shown at the scaffold
and epilogue stages, and the prompts. The input recipe is the reference's `get_inputs()` under a seed.
Does not verify anything itself: pass `task.reference`, a candidate and `task.verify_options()` to a
`kgym.verify.Verifier`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgym.tasks.spec import TaskSpec


@dataclass(frozen=True)
class Task:
    spec: TaskSpec
    description: str  # one line: what the reference computes
    reference: str  # KernelBench-form source: Model, get_inputs, get_init_inputs
    solution: str  # a reference answer that passes every gate (proof the task is solvable)
    wrong: str | None  # a known-wrong answer that must fail
    scaffold: str | None  # scaffold/epilogue stages: the code the model completes

    @property
    def task_id(self) -> str:
        return self.spec.task_id

    @property
    def hybrid(self) -> bool:
        return self.spec.hybrid

    def verify_options(self) -> dict[str, Any]:
        """Keyword overrides for `Verifier.verify`: the hybrid allowance and the parameter seed."""
        return {"hybrid": self.spec.hybrid, "seed": self.spec.seed}

    def inputs(self, seed: int | None = None, device: str = "cpu") -> list[Any]:
        """The input recipe: the reference's `get_inputs()` under `seed` (default: the task's seed).
        Hidden cases use the same recipe under secret seeds (`kgym.verify.parent.cases`)."""
        import torch

        from kgym.verify.parent.reference import load_reference

        ref = load_reference(self.reference, origin=f"<{self.task_id} reference>")
        torch.manual_seed(self.spec.seed if seed is None else seed)
        with torch.device(device):
            return list(ref.get_inputs())

    def prompt(self) -> str:
        """The single-turn prompt (KernelBench's style: reference, instructions, one example)."""
        from kgym.tasks.prompts import single_turn_prompt

        return single_turn_prompt(self)

    def repair_messages(self) -> list[dict[str, Any]]:
        """The opening messages of a repair episode (system + user); tools are `prompts.TOOLS`."""
        from kgym.tasks.prompts import repair_messages

        return repair_messages(self)
