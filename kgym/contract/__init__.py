"""The contract: the typed, plain data every hop of kgym carries, and the names that cross a boundary.

    from kgym.contract import EvalRequest, Verdict, Gate, Outcome, EndReason

Verdict, CaseResult and Timing (what the verifier decides), EvalRequest, WorkerReply and EvalResult
(what the farm carries), Episode and WorkerInfo (where an evaluation sits and who ran it), the
StrEnums (gates, outcomes, modes, end reasons, baselines), the verifier version and the
deterministic ids. Imports neither torch nor Ray, so records, metrics, episodes and the farm can
all import it; nothing here computes a verdict or a reward.
"""

from kgym.contract.ids import canonical_json, evaluation_id, source_hash
from kgym.contract.names import (
    FAILURE_KINDS,
    FAMILIES,
    GATES,
    HARD_GATES,
    Baseline,
    Correction,
    EndReason,
    Gate,
    Mode,
    Outcome,
)
from kgym.contract.request import Episode, EvalRequest, EvalResult, WorkerReply
from kgym.contract.verdict import CaseResult, Timing, Verdict
from kgym.contract.version import VERIFIER_VERSION
from kgym.contract.worker_info import WorkerInfo

__all__ = ["FAILURE_KINDS", "FAMILIES", "GATES", "HARD_GATES", "VERIFIER_VERSION", "Baseline", "CaseResult",
           "Correction",
           "EndReason", "Episode", "EvalRequest", "EvalResult", "Gate", "Mode", "Outcome", "Timing", "Verdict",
           "WorkerInfo", "WorkerReply", "canonical_json", "evaluation_id", "source_hash"]
