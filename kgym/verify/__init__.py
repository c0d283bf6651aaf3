"""The verifier: five gates around a sandboxed candidate process.

    from kgym.verify import verify, VerifyConfig
    verdict = verify(reference_source, candidate_source, VerifyConfig(device="cpu"))

One room per process (issue 29), so that a rule's home says which process runs it:

- `parent/`: the trusted parent only (the worker actor): `verifier.py` (the order of the gates, the
  comparison, the score), `verdict_draft.py` (the verdict while it is decided), `sandbox.py` (how
  candidate processes are started and killed), `reference.py`, `cases.py` (the hidden cases),
  `baselines.py`.
- `candidate/`: the candidate's process and the zygote it is forked from: `child.py` (its command
  loop), `zygote.py` (the fork server that pre-imports the child; its `ZygoteClient` is the parent's
  end), the tripwires (`guard.py`, `launches.py`, `frontend.py`, `library.py`, `python_data.py`,
  `kept_state.py`, `audit.py`, `outside.py`, `provenance.py`, `confine.py`) and `warmup_kernel.py`.
- `policy/`: the static policy the parent runs on the candidate's source (`policy.py`, `free_names.py`).
- this folder's top level, the shared ground both processes import: `accessors.py`, `bitwise.py`,
  `wire.py` (the socket protocol), `shared.py` (lent buffers), `timing.py`, `precision.py`, and
  `config.py` (`VerifyConfig`, torch-free: a job's `[verify]` table is its settings).

Imports flow one way: parent -> candidate, policy, shared; candidate -> shared; policy -> shared;
shared -> shared. Candidate code never imports parent code, at any level (`tests/test_imports.py`).
The parent imports from the candidate's room only its own end of a protocol (`ZygoteClient`) and
the pieces of a rule it records on the trusted reference (`guard.ConstructionRecorder`,
`library.record_library_calls`, `launches.confirmed_on_device`). Strings name modules too: the cold
child is `python -m kgym.verify.candidate.child`, the zygote `kgym.verify.candidate.zygote`.

The public names above are resolved lazily (PEP 562 `__getattr__`): importing any submodule runs this
file first, so an eager import here put the parent's verifier, reference, cases and the static policy
in every candidate process and zygote (`tests/test_imports.py`, `tests/test_zygote.py` hold that none
is there). The candidate's room imports only submodules from this package, never a public name.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# The public API, resolved on first use (PEP 562): importing the package, which every import of a
# submodule does first, loads nothing. The candidate's process imports kgym.verify.candidate.child
# (and its zygote kgym.verify.candidate.zygote): an eager import here ran the parent's verifier,
# reference and cases in the candidate's address space (tests/test_imports.py holds that it does not).
_PUBLIC = {
    "GATES": "kgym.contract", "CaseResult": "kgym.contract", "Timing": "kgym.contract",
    "Verdict": "kgym.contract",
    "Reference": "kgym.verify.parent.reference", "ReferenceError": "kgym.verify.parent.reference",
    "load_reference": "kgym.verify.parent.reference",
    "Verifier": "kgym.verify.parent.verifier", "VerifyConfig": "kgym.verify.config",
    "verify": "kgym.verify.parent.verifier",
}

__all__ = ["GATES", "CaseResult", "Reference", "ReferenceError", "Timing", "Verdict", "Verifier",
           "VerifyConfig", "load_reference", "verify"]

if TYPE_CHECKING:  # for type checkers and readers: the names the package gives
    from kgym.contract import GATES, CaseResult, Timing, Verdict
    from kgym.verify.config import VerifyConfig
    from kgym.verify.parent.reference import Reference, ReferenceError, load_reference
    from kgym.verify.parent.verifier import Verifier, verify


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
