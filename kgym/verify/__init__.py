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
  `wire.py` (the socket protocol), `shared.py` (lent buffers), `timing.py`, `precision.py`.

Imports flow one way: parent -> candidate, policy, shared; candidate -> shared; policy -> shared;
shared -> shared. Candidate code never imports parent code, at any level (`tests/test_imports.py`).
The parent imports from the candidate's room only its own end of a protocol (`ZygoteClient`) and
the pieces of a rule it records on the trusted reference (`guard.ConstructionRecorder`,
`library.record_library_calls`, `launches.confirmed_on_device`). Strings name modules too: the cold
child is `python -m kgym.verify.candidate.child`, the zygote `kgym.verify.candidate.zygote`.
"""

from kgym.contract import GATES, CaseResult, Timing, Verdict
from kgym.verify.parent.reference import Reference, ReferenceError, load_reference
from kgym.verify.parent.verifier import Verifier, VerifyConfig, verify

__all__ = ["GATES", "CaseResult", "Reference", "ReferenceError", "Timing", "Verdict", "Verifier",
           "VerifyConfig", "load_reference", "verify"]
