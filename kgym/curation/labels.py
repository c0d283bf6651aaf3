"""Stage 8 of the funnel: is a verified answer faster than eager PyTorch, and than torch.compile?

A label is None when that baseline was not measured (torch.compile is not timed on CPU, where the
interpreter's times mean nothing either); labels never drop a row. A speedup the verifier flagged
as suspicious (above its threshold) still labels as faster: the flag is kept beside it. Does not
time anything (the verifier's timing gate did).
"""

from __future__ import annotations

from dataclasses import dataclass

from kgym.contract import Verdict


@dataclass(frozen=True)
class SpeedLabels:
    speedup_eager: float | None
    speedup_compile: float | None
    faster_than_eager: bool | None
    faster_than_compile: bool | None
    flagged: bool


def speed_labels(verdict: Verdict) -> SpeedLabels:
    e, c = verdict.speedup_eager, verdict.speedup_compile
    return SpeedLabels(e, c, None if e is None else e > 1.0, None if c is None else c > 1.0, bool(verdict.flagged))
