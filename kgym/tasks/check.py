"""`check_task`: the public conformance check every registered task must pass.

For one task: the same seed gives byte-identical sources, prompts and inputs; the hidden cases the
verifier would draw differ from every input the prompt lets a model reproduce; the reference
solution passes every gate through `kgym.verify`; the known-wrong answer fails. The scaffold, when
there is one, is the solution with its marked region cut out. Runs on a CPU (tiny size) or a GPU.
Does not register or draw tasks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from kgym.tasks.registry import make_from_spec
from kgym.tasks.task import Task
from kgym.verify import Verdict, Verifier
from kgym.verify.parent.cases import CASES, case_seed, make_inputs
from kgym.verify.parent.reference import load_reference


@dataclass
class CheckResult:
    task_id: str
    stage: str
    problems: list[str] = field(default_factory=list)
    solution: Verdict | None = None
    wrong: Verdict | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def _same_inputs(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if isinstance(x, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype or not torch.equal(x, y):
                return False
        elif x != y:
            return False
    return True


def check_task(task: Task, verifier: Verifier) -> CheckResult:
    res = CheckResult(task.task_id, task.spec.stage)
    p = res.problems
    # Determinism: rebuilt from its spec, the task is byte-identical, and so are its inputs.
    again = make_from_spec(task.spec)
    for name in ("reference", "solution", "wrong", "scaffold", "description"):
        if getattr(again, name) != getattr(task, name):
            p.append(f"{name} differs between two makes of the same spec")
    if again.prompt() != task.prompt() or again.repair_messages() != task.repair_messages():
        p.append("prompts differ between two makes of the same spec")
    public = task.inputs()
    if not _same_inputs(public, again.inputs()):
        p.append("the same seed gave different inputs")
    if not any(isinstance(x, torch.Tensor) and x.is_floating_point() for x in public):
        p.append("get_inputs() returns no floating-point tensor for the hidden cases to vary")
    # Hidden cases: drawn from the verifier's secret, never equal to what the prompt's seed gives.
    ref = load_reference(task.reference)
    for case, transform in CASES:
        hidden = make_inputs(ref.get_inputs, case_seed(verifier.secret, task.spec.seed, case), transform,
                             torch.device("cpu"))
        if _same_inputs(hidden, public):
            p.append(f"hidden case {case!r} equals the public inputs")
    if task.spec.stage in ("scaffold", "epilogue"):
        if not task.scaffold or "TODO" not in task.scaffold:
            p.append("scaffold stage without a scaffold")
        elif task.scaffold == task.solution:
            p.append("the scaffold gives the whole solution away")
    # The reference solution passes every gate; the wrong answer fails one.
    opts = task.verify_options()
    res.solution = verifier.verify(task.reference, task.solution, **opts)
    if res.solution.error:
        p.append(f"kgym failed verifying the solution: {res.solution.error.strip().splitlines()[-1]}")
    elif not res.solution.passed:
        p.append(f"the reference solution failed gate {res.solution.gate}: {res.solution.reason[:300]}")
    if task.wrong is not None:
        res.wrong = verifier.verify(task.reference, task.wrong, **opts)
        if res.wrong.error:
            p.append(f"kgym failed verifying the wrong answer: {res.wrong.error.strip().splitlines()[-1]}")
        elif res.wrong.passed:
            p.append("the known-wrong answer passed every gate")
    return res
