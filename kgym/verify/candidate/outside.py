"""Candidate code runs only inside the harness's calls (import, construction, forward).

The harness calls into the candidate at known moments; everything else the child does (reading the
output, replying, waiting for the next draw, the timing protocol around the call) is the harness's.
Candidate code can still be started at other moments, by mechanisms that need no call from the
harness: a generator's `finally` or a finalizer run when the harness drops the output, a gc callback
or a collected cycle between two timed runs (after the parent wrote the next draw), a signal handler.
There it runs uncounted and untimed, and can launch kernels (finish the work after the timed region,
compute the next answer between runs).

`CallWindow` keeps one flag, `inside`, set by the harness around its calls and nowhere else, and:
- while outside, a profile hook (`sys.setprofile`, this thread; no other thread may exist) records
  every frame of the candidate's module that starts or resumes, whatever started it. Frames are told
  by their globals (every function the candidate's module defines shares them; making a function
  with other globals is refused by the audit hook), not by `f_code`, whose reading is an audit event.
  Inside, no hook is set: a call into the candidate costs nothing more;
- `LaunchCounter` refuses every Triton launch while outside (a library callable handed to a finalizer,
  Triton's own launcher included, runs no candidate frame);
- the signal handlers must stay those found at load (installing one raises no audit event in 3.11);
- automatic garbage collection runs only inside the calls (disabled at `leave`, enabled at `enter`),
  plus one young-generation collection the harness makes after each call, outside the timed region
  and after the output was read and copied (`collect`), where the candidate's cleanup may run but
  not launch: a cycle holding a generator of the candidate's is collected at a fixed point (an
  honest generator left in a cycle is never refused for a collection that happened to fall between
  calls), and a gc callback runs nowhere else outside the calls.
Every finding is written at once to the report channel (isolation): catching an error takes nothing
back. The hook is only a tripwire: it rejects, it never passes anything.
"""

from __future__ import annotations

import gc
import signal
import sys
from collections.abc import Callable
from typing import Any

_setprofile = sys.setprofile
_getprofile = sys.getprofile
_getsignal = signal.getsignal
_gc_enable, _gc_disable, _gc_isenabled, _gc_collect = gc.enable, gc.disable, gc.isenabled, gc.collect
_SIGNALS = tuple(sorted(signal.valid_signals()))


def signal_handlers() -> dict[int, Any]:
    return {s: _getsignal(s) for s in _SIGNALS}


class CallWindow:
    def __init__(self, report: Callable[[str, str], None]) -> None:
        self.report = report
        self.inside = False
        self.violations: list[str] = []
        self.candidate_globals: dict | None = None
        self.handlers: dict[int, Any] = {}
        self.watch = self._watch  # one bound method: compared by identity with sys.getprofile()
        # The code objects allowed to call sys.setprofile after load (the audit hook denies it to
        # everyone else).
        self.setters = frozenset({CallWindow.enter.__code__, CallWindow.leave.__code__,
                                  CallWindow.collect.__code__})

    def arm(self, candidate_globals: dict) -> None:
        """At load, before the candidate's module runs: whose frames to watch, which handlers stand."""
        self.candidate_globals = candidate_globals
        self.handlers = signal_handlers()
        self.inside = True  # the import and construction are the harness's calls

    def enter(self) -> None:
        """The harness calls the candidate: no watch while inside."""
        if self.inside or _getprofile() is not self.watch:
            self._violation("the harness's watch between its calls was removed or changed")
        self.inside = True
        _setprofile(None)
        _gc_enable()

    def leave(self) -> None:
        """The harness's call returned (or raised): from here on no candidate frame may run."""
        _gc_disable()
        _setprofile(self.watch)
        self.inside = False

    def collect(self) -> None:
        """After a call, outside any timed region: the call's young cycles are collected at this fixed
        point, as an automatic collection between calls used to (the memory they hold, and where the
        next buffers are mapped, stay as they were before gc was switched off between calls).
        Cleanup the candidate left in them (a generator's `finally`) may run here, but `inside` stays
        False, so it may launch nothing, and the guard refuses torch arithmetic as everywhere."""
        _setprofile(None)
        try:
            _gc_collect(0)
        finally:
            _setprofile(self.watch)

    def intact(self) -> list[str]:
        """Checked at every boundary, outside the calls."""
        found = []
        if self.inside or _getprofile() is not self.watch:
            found.append("the harness's watch between its calls was removed or changed")
        if _gc_isenabled():
            found.append("automatic garbage collection was switched on between the harness's calls")
        now = signal_handlers()
        if any(now.get(s) is not h for s, h in self.handlers.items()):  # identity: no candidate __eq__
            found.append("a signal handler was installed (it runs candidate code between the harness's calls)")
        return found

    def _violation(self, why: str) -> None:
        if why not in self.violations:
            self.violations.append(why)
            self.report("isolation", why)

    def _watch(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_globals is self.candidate_globals:
            code = frame.f_code  # an audit event, asked by kgym: allowed
            self._violation(f"candidate code ran outside the harness's calls: {code.co_name}() at line "
                            f"{frame.f_lineno} (a finalizer, generator cleanup, gc callback or handler; "
                            "code may run only inside import, __init__ and forward)")
