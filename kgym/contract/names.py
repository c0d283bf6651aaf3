"""The names that cross a boundary: gates, outcomes, episode modes and end reasons, speed baselines,
the learner's corrections, task families.

Each is a `StrEnum`, so a member compares equal to its string (`Gate.POLICY == "policy"`) and is
stored in Parquet, JSON and Prometheus labels as that string. Every module that needs one of these
names imports it from here; nothing spells them again. Does not say what a gate checks
(`kgym.verify`) or how a failure is scored (`kgym.reward`).
"""

from __future__ import annotations

from enum import StrEnum


class Gate(StrEnum):
    """Where a candidate failed. The first six are the gates in the order they are checked; TIMEOUT
    and CRASH are failure kinds of their own (the candidate's process hung or died)."""

    POLICY = "policy"
    COMPILE = "compile"
    LAUNCH = "launch"
    ISOLATION = "isolation"
    CORRECTNESS = "correctness"
    TIMING = "timing"
    TIMEOUT = "timeout"
    CRASH = "crash"

    @property
    def is_hard(self) -> bool:
        """Failing a hard gate scores 0, whatever else the verdict holds."""
        return self in HARD_GATES


# The checked gates in order (a report lists them so); `Verdict.gate` is the first that failed.
GATES: tuple[Gate, ...] = (Gate.POLICY, Gate.COMPILE, Gate.LAUNCH, Gate.ISOLATION, Gate.CORRECTNESS, Gate.TIMING)
FAILURE_KINDS: tuple[Gate, ...] = tuple(Gate)
HARD_GATES: frozenset[Gate] = frozenset({Gate.POLICY, Gate.COMPILE, Gate.LAUNCH, Gate.ISOLATION, Gate.TIMEOUT,
                                         Gate.CRASH})


class Outcome(StrEnum):
    """An evaluation's outcome: passed, failed (the candidate's fault: a gate, a timeout, a crash)
    or error (kgym's fault: never a verdict on the kernel, retried by the farm)."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"


class Mode(StrEnum):
    """How an episode runs: one answer, or a multi-turn repair episode with tools."""

    SINGLE = "single"
    REPAIR = "repair"


class EndReason(StrEnum):
    """Why an episode ended.

    answered: a single-turn answer was verified; no_code: the answer had no usable code block;
    truncated: the answer was cut off (by the generation limit) before its code block closed;
    finalized: finalize(id) in repair mode; no_submission: finalize before any submission;
    turn_limit: the turn limit ended a repair episode; context_limit: the next turn's prompt would
    not fit the engine's context (max_model_len, less the room a turn needs to generate);
    unrenderable: the chat template could not render the conversation after the model's own message
    (Llama 3.1's refuses two tool calls in one message): a limit, scored, never a kgym error."""

    ANSWERED = "answered"
    NO_CODE = "no_code"
    TRUNCATED = "truncated"
    FINALIZED = "finalized"
    NO_SUBMISSION = "no_submission"
    TURN_LIMIT = "turn_limit"
    CONTEXT_LIMIT = "context_limit"
    UNRENDERABLE = "unrenderable"

    def is_truncated(self) -> bool:
        """The episode was cut by a limit, not ended by the model (Gymnasium's `truncated`)."""
        return self in (EndReason.TRUNCATED, EndReason.TURN_LIMIT, EndReason.CONTEXT_LIMIT, EndReason.UNRENDERABLE)

    def is_terminated(self) -> bool:
        """The model ended the episode itself (Gymnasium's `terminated`)."""
        return not self.is_truncated()


class Correction(StrEnum):
    """How the learner corrects the sampler/learner gap (`kgym.rl.correction`; `[learner] correction`)."""

    NONE = "none"  # old = sampler log-probs
    RECOMPUTE = "recompute"  # old = the learner's own log-probs before the update
    TIS = "tis"  # old = the learner's, policy term weighted by min(exp(learner - sampler), cap)

    @property
    def recomputes(self) -> bool:
        """Does the learner compute its own old log-probs for every sample (one forward more)?"""
        return self is not Correction.NONE


class Baseline(StrEnum):
    """What the reward's speed term compares against. joint = min(speedup vs eager, vs compile)."""

    EAGER = "eager"
    COMPILE = "compile"
    JOINT = "joint"


# The study's fourteen task families, in the order its tables list them: the one list (the task
# registry imports `kgym.tasks.families.<name>` for each; job configs, records and plots read it here,
# without importing torch). A new family is a module there and a name here.
FAMILIES: tuple[str, ...] = ("elementwise", "reduction", "scan", "normalization", "softmax", "fusion", "matmul",
                             "gemm_epilogue", "conv1d", "conv2d", "pool2d", "module", "fused_hybrid", "kernelbook")
