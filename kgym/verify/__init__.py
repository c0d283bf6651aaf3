"""The verifier: five gates around a sandboxed candidate process.

    from kgym.verify import verify, VerifyConfig
    verdict = verify(reference_source, candidate_source, VerifyConfig(device="cpu"))

See `verifier.py` for the order of the gates, `child.py` for the candidate's process and
`sandbox.py` for how it is started and killed.
"""

from kgym.contract import GATES, CaseResult, Timing, Verdict
from kgym.verify.reference import Reference, ReferenceError, load_reference
from kgym.verify.verifier import Verifier, VerifyConfig, verify

__all__ = ["GATES", "CaseResult", "Reference", "ReferenceError", "Timing", "Verdict", "Verifier",
           "VerifyConfig", "load_reference", "verify"]
