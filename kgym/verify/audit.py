"""A runtime tripwire in the candidate's process: a `sys.addaudithook` hook (which cannot be removed).

When the candidate's own code (the innermost frame that is neither the standard library nor a frozen
bootstrap frame belongs to the candidate's file) raises a sensitive audit event, the event is
recorded as a violation and refused. Libraries may still do what they need: Triton runs ptxas and a C
compiler, opens its cache, walks frames; only the candidate may not. A tripwire may only reject: a
recorded violation fails the candidate whatever else it does, even if it catches the error.
"""

from __future__ import annotations

import os
import sys
import sysconfig

from kgym.verify.policy import import_allowed

_getframe = sys._getframe

# Events the candidate's code may never raise.
_DENY_PREFIXES = (
    "subprocess.", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
    "os.kill", "os.killpg", "os.remove", "os.rename", "os.rmdir", "os.chmod", "os.chown",
    "os.symlink", "os.link", "os.truncate", "os.listdir", "os.scandir", "os.chdir", "os.putenv",
    "os.unsetenv", "socket.", "ctypes.", "gc.get_", "sys._getframe", "sys._current_frames",
    "sys.settrace", "sys.setprofile", "sys.addaudithook", "sys.setrecursionlimit", "resource.",
    "marshal.", "pickle.find_class", "code.__new__", "function.__new__", "mmap.", "shutil.",
    "object.__getattr__", "object.__setattr__", "object.__delattr__", "builtins.input",
    "exec", "compile", "urllib.", "http.", "ftplib.", "webbrowser.", "signal.",
)
_OPEN_DENY_DIRS = ("/proc", "/sys", "/dev")


class AuditTripwire:
    def __init__(self, candidate_file: str, writable_dir: str):
        self.candidate_file = os.path.realpath(candidate_file)
        self.writable_dir = os.path.realpath(writable_dir)
        self.violations: list[str] = []
        paths = sysconfig.get_paths()
        self._stdlib = tuple({os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib")})
        # site-packages usually lies inside the stdlib folder: library frames, not stdlib frames
        self._site = tuple({os.path.realpath(paths[k]) for k in ("purelib", "platlib")})
        self._busy = False

    def install(self) -> None:
        sys.addaudithook(self._hook)

    def _caller_is_candidate(self) -> bool:
        frame = _getframe(2)
        while frame is not None:
            name = frame.f_code.co_filename
            if name == self.candidate_file:
                return True
            stdlib = name.startswith(self._stdlib) and not name.startswith(self._site)
            if not (name.startswith("<frozen") or stdlib):
                return False
            frame = frame.f_back
        return False

    def _denied(self, event: str, args: tuple) -> str | None:
        if event == "import":
            module = args[0] if args else ""
            if isinstance(module, str) and not import_allowed(module):
                return f"import of {module!r} at run time"
            return None
        if event == "open":
            path, mode = (args + (None, None))[:2]
            if not isinstance(path, str):
                return "open() of a file descriptor"
            real = os.path.realpath(path)
            if real.startswith(_OPEN_DENY_DIRS):
                return f"open({path!r})"
            writing = isinstance(mode, str) and any(c in mode for c in "wax+")
            if writing and not real.startswith(self.writable_dir):
                return f"open({path!r}, {mode!r}) for writing"
            return None
        if event.startswith(_DENY_PREFIXES):
            return f"{event} {str(args)[:120]}"
        return None

    def _hook(self, event: str, args: tuple) -> None:
        if self._busy:
            return
        if not (event in ("import", "open") or event.startswith(_DENY_PREFIXES)):
            return
        self._busy = True
        try:
            if not self._caller_is_candidate():
                return
            why = self._denied(event, args)
        finally:
            self._busy = False
        if why:
            self.violations.append(why)
            raise PermissionError(f"kgym sandbox: {why} is not allowed")

