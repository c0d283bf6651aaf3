"""Stage 5 of the funnel: pure Triton or hybrid, by the AST and by the verdict.

Before verifying, the answer's AST says whether forward() keeps a PyTorch op
(`kgym.kernelbench.hybrid.keeps_torch_op`); such an answer is verified as a hybrid task (exactly
one cuBLAS/cuDNN call allowed, everything else in Triton). The verdict then decides the label: an
answer is hybrid when the verifier saw it make a library call. An answer the AST took for pure
Triton that fails the isolation gate is verified once more as a hybrid (the AST misses calls built
at run time). Hybrids are kept and labelled: the study filtered them out and its level-2 score paid
for it (its lesson 8.2). Does not verify anything itself.
"""

from __future__ import annotations

from kgym.contract import Gate, Verdict
from kgym.kernelbench.hybrid import keeps_torch_op

TRITON = "triton"
HYBRID = "hybrid"


def ast_hybrid(answer: str) -> bool:
    return keeps_torch_op(answer)


def answer_mode(verdict: Verdict) -> str:
    """The label of a verified answer: hybrid when it made a library call."""
    return HYBRID if verdict.library_calls > 0 else TRITON


def retry_as_hybrid(verdict: Verdict, was_hybrid: bool) -> bool:
    """A pure-Triton verdict that failed only because forward() computed with PyTorch."""
    return not was_hybrid and verdict.error is None and verdict.gate == Gate.ISOLATION
