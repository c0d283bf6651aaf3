"""Runtime tripwires of the candidate's process that watch Python itself, not PyTorch.

- A `sys.addaudithook` hook (hooks cannot be removed), installed just before the candidate is
  imported. A dangerous event (processes, signals, sockets, ctypes, gc walks, tracing, rlimits,
  writes outside the private dir, ...) is refused and recorded from then on, whoever raises it:
  handing `os.kill` to a library callback (torch's tree_map) or to a finalizer that runs after
  forward() does not launder it. Only Triton may run its toolchain (ptxas, the C compiler).
  Introspection events (frames, code attributes) are refused while the candidate is on the stack
  unless Triton, kgym or a stdlib module that does not hand frames out asks for them.
- An import guard on `builtins.__import__`: an import from the candidate's frame must stay inside
  torch, triton or math, also when the module is already loaded (then no audit event fires).
- Tensor escape hatches (`Tensor.numpy`, `tolist`, `apply_`, `torch.from_numpy`, ...) that move
  compute out of the dispatcher's sight: refused when the candidate is on the stack.
- Raw addresses (`Tensor.data_ptr`, a storage's `data_ptr`) are for Triton: refused when the code
  asking, looked through the standard library, is neither Triton nor kgym while the candidate is on
  the stack (numpy's __array_interface__ reads any tensor's memory from one).
- String and code evaluation (the `exec` event: eval, exec, typing's get_type_hints, inspect's
  eval_str, dataclasses, namedtuple) from the import of the candidate on: refused unless the first
  non-stdlib frame asking is Triton's (its interpreter and binder run generated code) or the import
  system is between (a lazy import). A stdlib frame in between launders nothing. Compiling alone
  (`compile`) runs nothing and passes.
Every violation is written at once to the append-only channel the parent reads (`report`), so a
candidate that catches the error, or later reaches this object, cannot take it back. The hook itself
decides from a sealed copy of its rules and settings, taken at install (`_sealed_hook`): changing this
object, this module or its class afterwards changes nothing the hook reads.
"""

# ruff: noqa: F821 - the sealed functions below run with the sealed namespace `_sealed_hook` builds as
# their globals (CANDIDATE_FILE, realpath, startswith, ...): names this module itself never defines.
from __future__ import annotations

import builtins
import os
import sys
import sysconfig
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import torch

_getframe = sys._getframe

# Refused once the candidate is loaded, from any frame: a finalizer or callback the candidate left
# behind runs with no frame of its own on the stack. The harness needs none of these; Triton's
# toolchain is the one exemption (`_PROCESS_EVENTS`).
_DENY_PREFIXES = (
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.kill",
    "os.killpg", "os.putenv", "os.unsetenv", "os.setuid", "os.setgid", "os.chroot", "os.chdir",
    "socket.", "ctypes.", "gc.get_", "sys._current_frames", "sys.settrace", "sys.setprofile",
    "sys.addaudithook", "sys.setrecursionlimit", "resource.", "marshal.", "pickle.find_class",
    "code.__new__", "function.__new__", "mmap.", "builtins.input", "urllib.", "http.", "ftplib.",
    "webbrowser.", "signal.", "cpython.", "sqlite3.", "winreg.",
)
# Allowed inside the private dir (Triton's cache), refused elsewhere, from any frame. A file's times and
# extended attributes too (verifier 28): Landlock does not cover metadata, and a candidate (policy off) set
# the times and a `user.` attribute of a file outside its dir, 128 bits per file and 64 KiB per attribute
# that outlive its process and that any later candidate reads back with os.stat / os.getxattr.
_PATH_EVENTS = ("os.remove", "os.rename", "os.rmdir", "os.chmod", "os.chown", "os.symlink", "os.link",
                "os.truncate", "os.listdir", "os.scandir", "os.mkdir", "shutil.", "os.utime", "os.setxattr",
                "os.removexattr")
# Where each path event carries its directory descriptors (`dir_fd`, -1 when none was given) and which of
# its arguments are paths it creates or changes (os.symlink: its text, as before, and its link; rename and
# link: both ends, where only the first was judged). A rule keyed on a path must judge the path the kernel
# resolves: a relative path is resolved against the descriptor's directory, not the cwd, so
# `os.mkdir("x", dir_fd=os.open("/", ...))` made /x while the hook judged <cwd>/x (2026-12-07). The
# `open` event names no descriptor at all (os.open's): `_denied`.
_PATH_EVENT_ARGS = (("os.remove", (0,), (1,)), ("os.rmdir", (0,), (1,)), ("os.mkdir", (0,), (2,)),
                    ("os.chmod", (0,), (2,)), ("os.chown", (0,), (3,)), ("os.symlink", (0, 1), (2,)),
                    ("os.rename", (0, 1), (2, 3)), ("os.link", (0, 1), (2, 3)), ("os.utime", (0,), (3,)))
_PROCESS_EVENTS = ("subprocess.Popen", "os.posix_spawn", "os.exec")
_TOOLCHAIN = {"ptxas", "ptxas-blackwell", "gcc", "cc", "clang", "g++", "c++", "ld", "ldconfig",
              "ldconfig.real", "nvdisasm", "cuobjdump", "nvlink", "fatbinary"}
# The toolchain runs only with the arguments Triton forms itself (2026-12-07). A C compiler driver
# runs other programs on request (`-wrapper prog,args`, `-B dir`, `-specs=`, `-fplugin=`, `@file`), and
# Triton's builder takes extra flags from its caller (`triton.runtime.build._build(..., ccflags)`):
# forward() called it with `-wrapper /bin/sh,-c,...` and a shell, with no audit hook, guard or
# profiler, computed the ReLU the candidate returned (passed, reward 0.5, policy off). So a C
# compiler's flags must be those of `triton.runtime.build._build` (no ccflags: no Triton backend passes
# any), ldconfig's Triton's `-p`, and no tool takes a response file (`@file`: gcc, ld and nvlink read
# more arguments from it).
_CC_DRIVERS = frozenset({"gcc", "cc", "clang", "g++", "c++"})
_CC_FLAGS = frozenset({"-O3", "-shared", "-fPIC", "-Wno-psabi", "-o", "-std=c++17"})
_CC_FLAG_PREFIXES = ("-l", "-L", "-I")
_LDCONFIG_ARGS = ("-p",)
# Introspection, while the candidate is on the stack: refused unless the direct caller is Triton,
# kgym, or a stdlib module that does not hand frames out (inspect and traceback do).
_INTROSPECTION = ("sys._getframe", "object.__getattr__", "object.__setattr__", "object.__delattr__",
                  "exec", "compile")
# stdlib modules that call sys._getframe only to read a name or a filename and hand no frame back.
# Any other (inspect, traceback, logging.currentframe, ...) would hand the candidate a harness frame.
# The same holds for every event that yields a frame, not only sys._getframe: reading a traceback's,
# generator's, coroutine's or async generator's frame (`object.__getattr__` names the attribute). From
# any frame, `f_back` and `f_locals` (no audit event) reach every harness frame on the stack and the
# objects its locals hold (2026-12-07: `traceback.walk_tb` on a caught exception's traceback handed
# forward() its own frame, and through f_back run_timed's lists of times, which it rewrote).
_FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
_FRAME_READING_STDLIB = ("/warnings.py", "/typing.py", "/enum.py", "/collections/__init__.py",
                         "/dataclasses.py", "/abc.py", "/functools.py")
_OPEN_DENY_DIRS = ("/proc", "/sys", "/dev")
_HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"})  # subprocess uses /dev/null
_RUNTIME_IMPORT_PACKAGES = frozenset({"torch", "triton", "math", "typing", "__future__"})

_INTERPRETER_FILE = os.path.join("runtime", "interpreter.py")
# Methods that hand out a tensor's or storage's raw address (what numpy or ctypes need to read it).
_ADDRESS_METHODS = ("data_ptr", "const_data_ptr", "mutable_data_ptr")


def _yields_frame(event: str, args: tuple) -> bool:
    """Does this introspection event hand its asker a frame object (see _FRAME_ATTRIBUTES)?"""
    if event == "sys._getframe":
        return True
    return event == "object.__getattr__" and len(args) > 1 and type(args[1]) is str and args[1] in _FRAME_ATTRIBUTES
# File names that name a string, not a module: code compiled under them runs in no module's name.
_STRING_FILENAMES = frozenset({"<string>", "<unknown>", "<ast>", "<fstring>"})
_ESCAPES_TENSOR = ("numpy", "tolist", "apply_", "map_", "map2_", "__array__", "__dlpack__")
_ESCAPES_TORCH = ("from_numpy", "as_tensor", "asarray", "frombuffer", "from_dlpack")
# Ways to switch the dispatch guard off for a while (the profiler would still see the ops; this
# names the attempt).
_GUARD_SWITCHES_C = ("_DisableTorchDispatch", "_pop_torch_dispatch_stack", "_set_dispatch_mode",
                     "_unset_dispatch_mode", "_ExcludeDispatchKeyGuard", "_dispatch_tls_set_dispatch_key_excluded",
                     "_DisablePythonDispatcher", "_ForceDispatchKeyGuard")
_GUARD_SWITCHES_PY = ("_disable_current_modes", "_pop_mode", "_pop_mode_temporarily")
_UNPICKLE_PACKAGES = frozenset({"kgym", "torch", "builtins", "copyreg", "collections"})
# Switches that blind torch's profiler, the dispatch guard's backstop (it records every aten op of every
# thread, below any Python mode): RecordFunction off for this thread, its callbacks cleared or replaced,
# the legacy profiler's session. The harness never calls them once the candidate is loaded, so every
# binding of each (torch.autograd holds copies) is replaced by a door that refuses whoever calls it and
# keeps no original to hand back. `torch._C._autograd._enable_record_function(False)` inside forward()
# around torch compute under a guard switched off (an alias of _DisableTorchDispatch no tripwire wraps),
# put back before it returned, passed every check (policy off, 2026-12-07).
_PROFILER_BLINDS = ("_enable_record_function", "_clear_callbacks", "_set_empty_test_observer",
                    "_toggle_collection_dynamic", "_enable_profiler_legacy", "_disable_profiler_legacy")
# The profiler's own session switches: the harness's profile calls them (no candidate on the stack);
# from the candidate they would end the harness's session and start one of its own mid-forward.
_PROFILER_SESSION = ("_prepare_profiler", "_enable_profiler", "_disable_profiler")


def _site_dirs() -> list[str]:
    import site

    try:
        return [*site.getsitepackages(), site.getusersitepackages()]
    except AttributeError:  # an embedded interpreter's site module may lack them
        return []


# The audit hook reads this object's settings once, at install (`_sealed_hook`); the import guard and the
# tensor wrappers below still read it at each call (reachable with the policy off: docs/verify.md).
class AuditTripwire:
    def __init__(self, candidate_file: str, writable_dir: str, report: Callable[[str, str], None]):
        self.candidate_file = os.path.realpath(candidate_file)
        self.writable_dir = os.path.realpath(writable_dir)
        self.report = report
        self.violations: list[str] = []
        paths = sysconfig.get_paths()
        self._stdlib = tuple({os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib")})
        # site-packages usually lies inside the stdlib folder: library frames, not stdlib frames. In a
        # virtual environment that sees the system's packages, those live under the base interpreter's
        # stdlib folder, which sysconfig does not name: site does (an honest kernel's Triton frames
        # there were taken for stdlib frames and its launches refused).
        self._site = tuple({os.path.realpath(p) for p in (paths["purelib"], paths["platlib"], *_site_dirs())})
        import triton

        self._triton = os.path.dirname(os.path.realpath(triton.__file__))
        # the harness's own frames: the whole verify package (this file is in its candidate/ room)
        self._kgym = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
        # Does this Triton build a C launcher per kernel (before its generic launcher)? If not, no C
        # compiler runs once the candidate is loaded: Triton built its one module at warm-up.
        # The CPU's interpreter compiles nothing, whatever the version.
        self.compiles_launchers = os.environ.get("TRITON_INTERPRET") != "1" and _triton_compiles_launchers()
        self.profile_setters: frozenset = frozenset()  # code objects that may set the profile hook
        # Is kgym rewriting a checked kernel for the interpreter now? (child.py points it at the
        # launch hook's flag; until then Triton's interpreter may exec nothing.)
        self.interpreter_rewriting: Callable[[], bool] = lambda: False

    # --- frames -------------------------------------------------------------------------------
    def _is_stdlib(self, name: str) -> bool:
        return name.startswith("<frozen") or (name.startswith(self._stdlib) and not name.startswith(self._site))

    def candidate_on_stack(self, depth: int = 2) -> bool:
        """Is the candidate's file on the stack, from `depth` frames above this function up?"""
        frame = _getframe(depth)
        while frame is not None:
            if frame.f_code.co_filename == self.candidate_file:
                return True
            frame = frame.f_back
        return False

    def _first_non_stdlib(self, depth: int) -> str:
        """File of the innermost non-stdlib frame, `depth` frames above this function."""
        frame = _getframe(depth)
        while frame is not None and self._is_stdlib(frame.f_code.co_filename):
            frame = frame.f_back
        return frame.f_code.co_filename if frame is not None else ""

    # --- installation -------------------------------------------------------------------------
    def violation(self, why: str) -> None:
        self.violations.append(why)
        self.report("policy", f"sandbox: {why}")

    def install(self) -> None:
        hook = _sealed_hook(self)
        sys.addaudithook(hook)
        # The escape wrappers ask the sealed hook's own frame reader whether the candidate is on the
        # stack (`_gate`), not this object, whose attributes the candidate reaches. Never kept on this
        # object: its __globals__ is the sealed namespace the hook decides from.
        on_stack = hook.__globals__["_candidate_on_stack"]
        self._install_import_guard()
        self._install_escape_tripwires(on_stack)
        self._install_thread_and_fork_tripwires(on_stack, hook.__globals__["_toolchain_argv_ok"])

    def _install_import_guard(self) -> None:
        original = builtins.__import__
        tripwire = self

        def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
            # C code importing lazily (torch's dispatcher does) also lands here with the candidate's
            # frame on top, so submodules of the allowed packages pass; anything else is refused.
            caller = _getframe(1).f_code.co_filename
            top = name.partition(".")[0]
            if caller == tripwire.candidate_file and (level or top not in _RUNTIME_IMPORT_PACKAGES):
                tripwire.violation(f"import of {name!r} at run time")
                raise PermissionError(f"kgym sandbox: import of {name!r} is not allowed")
            return original(name, globals, locals, fromlist, level)

        builtins.__import__ = guarded_import
        self.import_guard = guarded_import

    def _install_escape_tripwires(self, on_stack: Callable[[int], bool]) -> None:
        from torch.utils import _mode_utils, _python_dispatch

        self.escapes: dict[str, Any] = {}
        for owner, names in ((torch.Tensor, _ESCAPES_TENSOR), (torch, _ESCAPES_TORCH),
                             (torch._C, _GUARD_SWITCHES_C), (_python_dispatch, _GUARD_SWITCHES_PY),
                             (_mode_utils, ("no_dispatch",))):
            for name in names:
                original = getattr(owner, name, None)
                if original is None:
                    continue
                wrapped = self._escape_wrapper(f"{getattr(owner, '__name__', 'torch')}.{name}", original,
                                               "switches the dispatch guard off"
                                               if name.startswith("_") or name == "no_dispatch"
                                               else "moves compute out of PyTorch's dispatcher and Triton",
                                               on_stack)
                setattr(owner, name, wrapped)
                self.escapes[f"{id(owner)}.{name}"] = (owner, name, wrapped)
        for owner in (torch.Tensor, torch.UntypedStorage, torch.TypedStorage):
            for name in _ADDRESS_METHODS:
                original = getattr(owner, name, None)
                if original is not None:
                    wrapped = self._address_wrapper(f"{owner.__name__}.{name}", original)
                    setattr(owner, name, wrapped)
                    self.escapes[f"{id(owner)}.{name}"] = (owner, name, wrapped)

    def _address_wrapper(self, label: str, original: Any) -> Any:
        """data_ptr for Triton's launcher and kgym; refused to code the candidate controls (its own
        frames, or a library it handed the call to) while it is on the stack."""
        tripwire = self

        trusted = (tripwire._triton, tripwire._kgym)

        def data_ptr(*args, **kwargs):
            # Triton's launcher asks for every tensor argument of every launch, timed runs included:
            # its direct frame is checked first, so that path costs one frame look-up.
            caller = _getframe(1)
            if caller.f_code.co_filename.startswith(trusted):
                return original(*args, **kwargs)
            # On a GPU the asker is Triton's argument binder: code Triton generates and execs (file
            # "<string>", triton/runtime/jit.py) and calls from JITFunction.run, whose native
            # specialisation reads each tensor's address for its alignment. Trusted only with that
            # caller: a candidate cannot exec code of its own after load.
            back = caller.f_back
            if caller.f_code.co_filename == "<string>" and back is not None \
                    and back.f_code.co_filename.startswith(tripwire._triton):
                return original(*args, **kwargs)
            if tripwire.candidate_on_stack(2):
                asker = tripwire._first_non_stdlib(2)
                if not asker.startswith((tripwire._triton, tripwire._kgym)):
                    tripwire.violation(f"{label}() hands a raw address to {os.path.basename(asker) or '?'} "
                                       "(raw memory is for Triton kernels)")
                    raise PermissionError(f"kgym sandbox: {label}() is not allowed")
            return original(*args, **kwargs)

        return data_ptr

    def _escape_wrapper(self, label: str, original: Any, what: str, on_stack: Callable[[int], bool]) -> Any:
        tripwire = self
        gate = _gate(on_stack, original)
        next(gate)

        # The decision and the original live in a generator's frame (`_gate`), read only through
        # gi_frame, an audit event the hook refuses to the candidate. Held in a closure cell they were
        # the candidate's (policy off, 2026-12-07): `__closure__` handed out the unwrapped switch, and the
        # tripwire's `candidate_file`, which the wrapper read, could be moved for a while. The gate is a
        # keyword-only default (a caller may pass another, which can hand out only what it already has).
        def wrapper(*args, _kgym_gate=gate, **kwargs):
            fn = _kgym_gate.send(1)
            if fn is None:
                tripwire.violation(f"{label}() {what}")
                raise PermissionError(f"kgym sandbox: {label}() is not allowed")
            return fn(*args, **kwargs)

        return wrapper

    def _install_thread_and_fork_tripwires(self, on_stack: Callable[[int], bool],
                                           argv_ok: Callable[[str, Any], bool]) -> None:
        """Two doors that raise no audit event (3.11): `_thread.start_new_thread` (every Python
        thread; dispatch modes are thread-local, so a thread would compute unguarded) and
        `_posixsubprocess.fork_exec` (subprocess and multiprocessing.util.spawnv_passfds end there).
        Every binding of either in a loaded module is replaced: no thread may start once the
        candidate is loaded, and only Triton may run its toolchain."""
        import _imp
        import _posixsubprocess
        import _thread

        tripwire = self
        start_original, fork_original = _thread.start_new_thread, _posixsubprocess.fork_exec

        def start_new_thread(*args, **kwargs):
            tripwire.violation("a thread was started (_thread.start_new_thread)")
            raise PermissionError("kgym sandbox: starting a thread is not allowed")

        def fork_exec(*args, **kwargs):
            argv = args[0] if args else None
            exe = argv[0] if type(argv) in (list, tuple) and argv else b""
            exe = os.path.basename(os.fsdecode(exe)) if isinstance(exe, (str, bytes)) else ""
            if exe in _TOOLCHAIN and self._first_non_stdlib(2).startswith(self._triton) and argv_ok(exe, argv):
                return fork_original(*args, **kwargs)
            tripwire.violation(f"_posixsubprocess.fork_exec {str(argv)[:120]}")
            raise PermissionError("kgym sandbox: starting a process is not allowed")

        # The profiler's switches (`_PROFILER_BLINDS`: refused always; `_PROFILER_SESSION`: refused with
        # the candidate on the stack), by the object, wherever a module bound it.
        autograd = torch._C._autograd
        blinds = {getattr(autograd, n): n for n in _PROFILER_BLINDS if getattr(autograd, n, None) is not None}
        session = {getattr(autograd, n): n for n in _PROFILER_SESSION if getattr(autograd, n, None) is not None}
        # keyed by builtin functions only: their hash and == are C code that compares identities
        builtin = type(len)
        doors: dict[Any, Any] = {start_original: start_new_thread, fork_original: fork_exec,
                                 _imp.create_dynamic: self._extension_door(_imp.create_dynamic)}
        for switch, name in blinds.items():
            doors[switch] = self._profiler_door(name)
        for switch, name in session.items():
            doors[switch] = self._escape_wrapper(f"torch.autograd.{name}", switch,
                                                 "switches the profiler (the guard's backstop) off or on", on_stack)
        # `is`, not id(): id() raises an audit event per call (50k of them here, 0.1 s under the hook)
        for module in list(sys.modules.values()):
            try:
                found = [(k, v) for k, v in vars(module).items() if type(v) is builtin and v in doors]
            except TypeError:
                continue
            for k, v in found:
                door = doors[v]
                setattr(module, k, door)
                self.escapes[f"{id(module)}.{k}"] = (module, k, door)

    def _extension_door(self, original: Any) -> Any:
        """`_imp.create_dynamic`, the loader of every C extension module (importlib's, Triton's
        `_load_module_from_path`), raises no audit event in 3.11: a shared object the candidate wrote
        and loaded through Triton's loader computed its ReLU in native code (policy off, reward 0.5,
        2026-12-07). Once the candidate is loaded, no extension file created or changed since then
        is loaded (its ctime, which no unprivileged process sets, against a marker written at
        install). Extensions installed before, lazily imported by torch or the stdlib, still load."""
        tripwire = self
        marker = os.path.join(self.writable_dir, ".kgym-load-began")
        with open(marker, "w") as f:
            f.write("the candidate's load began; no native code written since runs in this process\n")
        # Where Triton compiles and loads a launcher per kernel (before 3.9), a new module is its own
        # launcher as often as not: the door then refuses nothing (docs/verify.md, open).
        since = float("inf") if self.compiles_launchers else os.stat(marker).st_ctime
        gate = _extension_gate(original, since, os.stat)
        next(gate)

        def create_dynamic(spec, *args, _kgym_gate=gate):
            name, origin = spec.name, spec.origin  # read once: the gate decides on, and loads, these
            answer = _kgym_gate.send((name, origin, args))
            if type(answer) is tuple:
                return answer[0]
            if type(answer) is str:
                tripwire.violation(answer)
                raise PermissionError(f"kgym sandbox: {answer} is not allowed")
            raise answer

        return create_dynamic

    def _profiler_door(self, name: str) -> Any:
        """A door in place of a switch that blinds the profiler (`_PROFILER_BLINDS`): it refuses every
        call and holds no original."""
        tripwire = self

        def door(*args, **kwargs):
            tripwire.violation(f"torch.autograd.{name}() switches the profiler (the guard's backstop) off")
            raise PermissionError(f"kgym sandbox: torch.autograd.{name}() is not allowed")

        return door

    def intact(self) -> bool:
        """Are the import guard and the escape tripwires still in place?"""
        if builtins.__import__ is not self.import_guard:
            return False
        return all(getattr(owner, name, None) is wrapped for owner, name, wrapped in self.escapes.values())


def _extension_gate(original: Any, since: float, stat: Callable[[str], Any]) -> Any:
    """The extension door's decision and its original, reachable only through this generator's frame
    (see `_gate`). Sent (name, origin, args), it yields (module,) for a load it made, a refusal's text,
    or the exception the load raised."""
    answer: Any = None
    while True:
        name, origin, args = yield answer
        try:
            if type(name) is not str or type(origin) is not str:
                answer = "loading an extension module by a name or path that is not a str"
            elif stat(origin).st_ctime >= since:
                answer = (f"loading native code written after the candidate's load began "
                          f"({origin[-120:]!r}: an extension module)")
            else:
                spec = SimpleNamespace(name=name, origin=origin)
                answer = (original(spec, *args),)
        except BaseException as e:  # noqa: BLE001 - handed back to the caller as the load's own error
            answer = e


def _triton_compiles_launchers() -> bool:
    """Does this Triton compile C per kernel launcher? Triton 3.9's NVIDIA backend builds one module
    (its driver, at the first launch: the spare's warm-up) and launches every kernel through it;
    older ones wrote and compiled a launcher per signature (`make_launcher`, `compile_module_from_src`)."""
    try:
        from triton.backends.nvidia import driver
    except Exception:  # noqa: BLE001 - no NVIDIA backend to ask: keep the older rule
        return True
    return any(hasattr(driver, n) for n in ("compile_module_from_src", "make_launcher"))


def _gate(on_stack: Callable[[int], bool], original: Any) -> Any:
    """An escape wrapper's decision (a generator, primed by the caller): sent 1 by the wrapper, it yields
    the original when no frame of the candidate is on the stack above the wrapper, else None. Its locals
    (the sealed hook's frame reader and the original) are reachable only through its frame."""
    answer = None
    while True:
        up = yield answer
        answer = None if on_stack(up) else original


# --- the audit hook, sealed -----------------------------------------------------------------------
# The hook decides from state no Python object the candidate can reach holds (2026-12-07, verifier 19).
# Until then it was a method of AuditTripwire reading the tripwire's attributes (its re-entrancy flag
# `_busy`, candidate_file, the trusted folders), this module's globals and its class's methods, all
# reachable with the static policy off (the import guard installed as builtins.__import__ closes over
# the tripwire; this module is in sys.modules): forward() set `_busy`, asked sys._getframe for the
# harness's frames, rewrote the timing lists and put `_busy` back before returning.
#
# Now the functions below are templates: `_sealed_hook` copies each into a namespace of its own (the
# functions' globals: the decision's settings as plain strings, tuples and frozensets, the stdlib
# functions it calls and a copy of builtins, all taken at install, before any candidate code ran) and
# hands sys.addaudithook the copy of `_hook`. Nothing holds that namespace or its functions but the
# functions themselves and the interpreter's list of hooks, which Python cannot read (gc.get_referrers
# and gc.get_objects are refused). A change to the tripwire, this module or its class after install
# changes nothing the hook reads.
#
# Re-entrancy without a flag: the hook's own frame look-ups raise events too (sys._getframe and a
# frame's f_code). A frame's f_code is answered first (a frame's code, asked of a frame one already
# holds, hands out nothing the frame did not). sys._getframe is answered without a look-up when the
# frame it returns runs one of the sealed frame readers (FRAME_READERS: its code, and the sealed
# namespace as its globals, which no other function has): those readers call nothing but C code on
# frames and strings (str's methods unbound), so no other code can run while one of their frames is on the stack, and
# no one else can be handed such a frame. Every other event raised while the hook runs (a repr in a
# refusal's message, a path resolved) is judged like any other, the hook's own frames included.

def _sealed_hook(tripwire: AuditTripwire) -> Callable[[str, tuple], None]:
    """The hook for `tripwire`'s settings at this moment, in a namespace nothing else holds."""
    import types

    ns: dict[str, Any] = {name: globals()[name] for name in _SEALED_CONSTANTS}
    sealed_builtins = dict(builtins.__dict__)
    paths = _sealed_paths(sealed_builtins)
    ns.update(
        __builtins__=sealed_builtins, __name__=__name__, SEALED=ns, FrameType=types.FrameType,
        CANDIDATE_FILE=str(tripwire.candidate_file), WRITABLE_DIR=str(tripwire.writable_dir),
        STDLIB=tuple(tripwire._stdlib), SITE=tuple(tripwire._site), TRITON=str(tripwire._triton),
        TRITON_DIR=str(tripwire._triton) + os.sep, TRUSTED=(str(tripwire._triton), str(tripwire._kgym)),
        PROFILE_SETTERS=frozenset(tripwire.profile_setters), INTERPRETER_REWRITING=tripwire.interpreter_rewriting,
        REPORT=tripwire.report, VIOLATIONS=tripwire.violations, getframe=sys._getframe,
        realpath=paths["realpath"], fsdecode=paths["fsdecode"], isfile=paths["isfile"],
        basename=paths["basename"], joinpath=paths["join"], readlink=os.readlink, PathLike=os.PathLike,
        startswith=str.startswith, endswith=str.endswith,
        str_eq=str.__eq__,
        WATCHED=_DENY_PREFIXES + _PATH_EVENTS + _PROCESS_EVENTS, C_AFTER_LOAD=bool(tripwire.compiles_launchers))
    for f in _SEALED_FUNCTIONS:
        ns[f.__name__] = types.FunctionType(f.__code__, ns, f.__name__, f.__defaults__, None)
    ns["FRAME_READERS"] = frozenset(ns[f.__name__].__code__ for f in _FRAME_READERS)
    return ns["_hook"]


def _sealed_paths(sealed_builtins: dict) -> dict[str, Any]:
    """posixpath's realpath, isfile and basename and os.fsdecode, for the sealed hook: the same code, run
    with globals of their own (a copy of posixpath's, with `os`, `stat` and `genericpath` replaced by
    namespaces of the C functions they use, and the sealed builtins). The originals look up
    `os.fspath`, `os.lstat`, `genericpath._check_arg_types`, ... in modules any code may rewrite: a
    candidate with the policy off could have answered the hook's path rules for them."""
    import genericpath
    import posixpath
    import stat
    import types

    ns: dict[str, Any] = dict(posixpath.__dict__)
    ns.update(__builtins__=sealed_builtins, fspath=os.fspath, bytes_decode=bytes.decode, str_encode=str.encode,
              FS_ENCODING=sys.getfilesystemencoding(), FS_ERRORS=sys.getfilesystemencodeerrors())

    def seal(f: Any) -> Any:
        g = types.FunctionType(f.__code__, ns, f.__name__, f.__defaults__, f.__closure__)
        g.__kwdefaults__ = dict(f.__kwdefaults__) if f.__kwdefaults__ else None
        return g

    for name, value in list(ns.items()):
        if type(value) is types.FunctionType and value.__module__ in ("posixpath", "genericpath"):
            ns[name] = seal(value)
    ns["fsdecode"], ns["fsencode"] = seal(_path_fsdecode), seal(_path_fsencode)
    ns["genericpath"] = types.SimpleNamespace(_check_arg_types=seal(genericpath._check_arg_types),
                                              _splitext=seal(genericpath._splitext))
    ns["os"] = types.SimpleNamespace(fspath=os.fspath, stat=os.stat, lstat=os.lstat, fstat=os.fstat,
                                     readlink=os.readlink, getcwd=os.getcwd, getcwdb=os.getcwdb,
                                     fsdecode=ns["fsdecode"], fsencode=ns["fsencode"],
                                     sep=os.sep)
    ns["stat"] = types.SimpleNamespace(S_ISLNK=stat.S_ISLNK, S_ISREG=stat.S_ISREG, S_ISDIR=stat.S_ISDIR)
    return {name: ns[name] for name in ("realpath", "isfile", "basename", "fsdecode", "join")}


def _path_fsdecode(filename):  # sealed (_sealed_paths): os.fsdecode with its encoding bound
    filename = fspath(filename)
    if isinstance(filename, bytes):
        return bytes_decode(filename, FS_ENCODING, FS_ERRORS)
    return filename


def _path_fsencode(filename):  # sealed (_sealed_paths): os.fsencode with its encoding bound
    filename = fspath(filename)
    if isinstance(filename, str):
        return str_encode(filename, FS_ENCODING, FS_ERRORS)
    return filename


def _hook(event, args):  # sealed (see above): globals are the sealed namespace
    if event == "object.__getattr__":
        if len(args) > 1 and type(args[1]) is str and args[1] == "f_code" and type(args[0]) is FrameType:
            return  # the hook's own reads of a frame's code, every frame it looks at
    elif event == "sys._getframe":
        frame = args[0] if args else None
        if type(frame) is FrameType and frame.f_globals is SEALED and frame.f_code in FRAME_READERS:
            return  # a sealed frame reader asking for its own frame
    if not (event == "open" or event.startswith(WATCHED) or event in _INTROSPECTION):
        return
    why = _denied(event, args)
    if why:
        VIOLATIONS.append(why)
        REPORT("policy", f"sandbox: {why}")
        raise PermissionError(f"kgym sandbox: {why} is not allowed")


# The frame readers: C code on frames and strings only (see above; str's own methods, unbound, so that
# no subclass's method can run). `up` counts frames above the reader's caller: 0 is the caller itself.
def _frame_file(up):
    """File of the frame `up` frames above the caller ("" past the outermost)."""
    frame = getframe(0).f_back
    while up and frame is not None:
        frame = frame.f_back
        up -= 1
    return frame.f_code.co_filename if frame is not None else ""


def _frame_runs(up, codes):
    """Does the frame `up` frames above the caller run one of `codes`?"""
    frame = getframe(0).f_back
    while up and frame is not None:
        frame = frame.f_back
        up -= 1
    return frame is not None and frame.f_code in codes


def _candidate_on_stack(up):
    """Is the candidate's file on the stack, from `up` frames above the caller out?"""
    frame = getframe(0).f_back
    while up and frame is not None:
        frame = frame.f_back
        up -= 1
    while frame is not None:
        if str_eq(frame.f_code.co_filename, CANDIDATE_FILE):
            return True
        frame = frame.f_back
    return False


def _first_non_stdlib(up):
    """File of the innermost non-stdlib frame from `up` frames above the caller out ("" if none)."""
    frame = getframe(0).f_back
    while up and frame is not None:
        frame = frame.f_back
        up -= 1
    while frame is not None:
        name = frame.f_code.co_filename
        if not (startswith(name, "<frozen") or (startswith(name, STDLIB) and not startswith(name, SITE))):
            return name
        frame = frame.f_back
    return ""


def _evaluator(up):
    """Walking out through stdlib frames from `up` frames above the caller: None when the import system
    is reached first (a frozen importlib frame), else the first non-stdlib file, "?" if none."""
    frame = getframe(0).f_back
    while up and frame is not None:
        frame = frame.f_back
        up -= 1
    while frame is not None:
        name = frame.f_code.co_filename
        if not (startswith(name, "<frozen") or (startswith(name, STDLIB) and not startswith(name, SITE))):
            return name
        if startswith(name, "<frozen importlib"):
            return None
        frame = frame.f_back
    return "?"


def _toolchain_argv_ok(exe, argv):
    """Are these the arguments Triton itself gives the tool `exe` (see _CC_FLAGS)? argv[0] is the tool."""
    if not isinstance(argv, (list, tuple)) or not argv:
        return False  # a shell string: Triton never runs one
    words = []
    for a in argv[1:]:
        if not isinstance(a, (str, bytes, PathLike)):
            return False
        words.append(fsdecode(a))
    for w in words:
        if startswith(w, "@"):
            return False
    if exe in _CC_DRIVERS:
        if not C_AFTER_LOAD:
            return False
        for w in words:
            if not startswith(w, "-"):
                continue  # a source or the output
            if w in _CC_FLAGS:
                continue
            if len(w) > 2 and startswith(w, _CC_FLAG_PREFIXES):
                continue
            return False
    if startswith(exe, "ldconfig"):
        return tuple(words) == _LDCONFIG_ARGS
    return True


def _is_stdlib(name):
    return startswith(name, "<frozen") or (startswith(name, STDLIB) and not startswith(name, SITE))


def _path_ok(path):
    if isinstance(path, int):
        return True  # an already-open descriptor: opening it was checked (shutil.rmtree uses these)
    if isinstance(path, (bytes, PathLike)):
        path = fsdecode(path)
    return isinstance(path, str) and realpath(path).startswith(WRITABLE_DIR)


def _path_event_ok(event, args):
    """May path event `event` touch its paths (`_PATH_EVENT_ARGS`)? Each path it creates or changes must
    lie in the writable dir, and a relative one only where no directory descriptor is given (the hook
    resolves relative paths against the cwd, as the kernel does only then)."""
    for name, paths, dir_fds in _PATH_EVENT_ARGS:
        if event == name:
            if len(args) <= max(paths + dir_fds):
                return False
            relative = []
            for i in paths:
                p = args[i]
                if isinstance(p, (bytes, PathLike)):
                    p = fsdecode(p)
                if not (isinstance(p, str) and _path_ok(p)):
                    return False
                if not startswith(p, "/"):
                    relative.append(p)
            for i in dir_fds:
                fd = args[i]
                if relative and fd is not None and fd != -1:
                    # Resolved in the descriptor's directory, as the kernel resolves it (shutil.rmtree's
                    # fd-based walk removes Triton's launcher build dir so: `os.remove(name, dir_fd=fd)`).
                    if type(fd) is not int or fd < 0:
                        return False
                    try:
                        base = readlink("/proc/self/fd/" + str(fd))
                    except OSError:
                        return False
                    for p in relative:
                        if not startswith(realpath(joinpath(base, p)), WRITABLE_DIR):
                            return False
            return True
    return _path_ok(args[0])


def _denied(event, args):
    """The rules (sealed): the reason to refuse `event`, or None. Frames: 0 is this function, 1 the
    hook, 2 the frame that raised the event."""
    if event == "open":
        path, mode = (args + (None, None))[:2]
        if not isinstance(path, (str, bytes, PathLike)):
            return None  # an already-open descriptor (os.fdopen): the open itself was checked
        name = fsdecode(path)
        if mode is None and not startswith(name, "/") and _candidate_on_stack(2):
            # os.open's event (mode None) names its path but not its `dir_fd`: a relative path may be
            # resolved in any directory the candidate holds a descriptor of (os.open("/") is allowed),
            # so no rule below can judge it ("proc/<pid>/environ" relative to "/" read the trusted
            # parent's environment, 2026-12-07). Builtin open takes no descriptor: judged as before.
            return f"os.open({path!r}): a relative path (its directory descriptor is not named to the audit hook)"
        real = realpath(name)
        if real.startswith(_OPEN_DENY_DIRS) and real not in _HARMLESS_DEVICES and _candidate_on_stack(2):
            return f"open({path!r})"
        writing = isinstance(mode, str) and any(c in mode for c in "wax+")
        if writing and not real.startswith(WRITABLE_DIR):
            return f"open({path!r}, {mode!r}) for writing"
        return None
    if event.startswith(_PROCESS_EVENTS):
        # subprocess.Popen: (executable, args, cwd, env), executable often None; os.posix_spawn and
        # os.exec: (path, argv, env)
        exe = args[0] if args else None
        if exe is None and len(args) > 1 and isinstance(args[1], (list, tuple)) and args[1]:
            exe = args[1][0]
        elif exe is None and len(args) > 1 and isinstance(args[1], (str, bytes)):
            exe = args[1].split()[0] if args[1].split() else ""
        if isinstance(exe, (list, tuple)):
            exe = exe[0] if exe else ""
        exe = basename(fsdecode(exe)) if isinstance(exe, (str, bytes, PathLike)) else ""
        if exe in _TOOLCHAIN and startswith(_first_non_stdlib(2), TRITON) and _toolchain_argv_ok(
                exe, args[1] if len(args) > 1 else None):
            return None
        return f"{event} {str(args)[:120]}"
    if event.startswith(_PATH_EVENTS):
        return None if args and _path_event_ok(event, args) else f"{event} {str(args)[:120]}"
    if event == "pickle.find_class" and args and isinstance(args[0], str) and (
            args[0].partition(".")[0] in _UNPICKLE_PACKAGES):
        return None  # the harness unpickling its parent's commands (handles, dtypes, sizes)
    if event == "sys.setprofile" and _frame_runs(2, PROFILE_SETTERS):
        return None  # the harness's own watch between its calls (outside.CallWindow)
    if event.startswith(_DENY_PREFIXES):
        return f"{event} {str(args)[:120]}"
    if event in ("exec", "compile"):
        return _evaluation(event, args)
    if event in _INTROSPECTION:
        # Triton's and kgym's own reads pass wherever the candidate is; decided first, so that the
        # harness's reads (every function's __code__ and defaults in its fingerprint of kgym's
        # globals, ~1,000 a check) do not each walk the whole stack: the same answers, the stack walk
        # only for other callers.
        caller = _frame_file(2)  # the frame that raised the event
        if startswith(caller, TRUSTED):
            return None
        if not _candidate_on_stack(2):
            return None
        if _is_stdlib(caller) and (not _yields_frame(event, args) or endswith(caller, _FRAME_READING_STDLIB)):
            return None
        return f"{event} {str(args)[:120]}"
    return None


def _evaluation(event, args):
    """exec (eval, exec, get_type_hints, ...) after the candidate's import began: Triton and the
    import system only. Walks out from the frame that raised the event through stdlib frames (typing,
    inspect, dataclasses and the like evaluate on a caller's behalf) to the first one that is not: it
    must be Triton's. kgym's own frames are not exempt: a finalizer the candidate left runs inside
    them. `compile` alone is inert (typing's Optional["T"] compiles its string without running it): a
    code object runs only through an exec event, which is judged here whatever file the code claims,
    or through function/code construction, refused above. Frames: 0 this, 1 _denied, 2 the hook, 3
    the frame that raised the event."""
    if event == "compile":
        return _compilation(args)
    asker = _evaluator(3)
    if asker is None:
        # A module being imported (the candidate's own import included), unless it is a file the
        # candidate wrote into its private dir: that would be its code under another name.
        code = args[0] if args else None
        claimed = getattr(code, "co_filename", "") or ""
        where = realpath(claimed) if type(claimed) is str else ""
        if where.startswith(WRITABLE_DIR) and where != CANDIDATE_FILE:
            return f"exec of {basename(where)} (a module the candidate wrote, imported)"
        if type(claimed) is not str or not (claimed.startswith("<frozen") or isfile(where)):
            # A real import runs a module's file; code that names no file was compiled from a string
            # and handed to a loader (a candidate's importlib subclass, 2026-12-04).
            return f"exec of code from {str(claimed)[:80]!r} through the import system (no such module file)"
        return None
    if startswith(asker, TRITON):
        if not endswith(asker, _INTERPRETER_FILE):
            return None
        # Triton's interpreter execs the kernels it rewrites: only kgym's own rewrite of a checked
        # kernel (LaunchCounter.pin_interpreted), of code from the candidate's file. Any other exec
        # through it ran a string no rule had read (the rewriter's private _compile_and_exec, reached
        # through the kernel object, under a file name of its choosing).
        code = args[0] if args else None
        claimed = getattr(code, "co_filename", None)
        if INTERPRETER_REWRITING() and type(claimed) is str and _candidates_or_tritons(claimed):
            return None
        return (f"{event} through Triton's interpreter outside kgym's rewrite of a checked kernel "
                f"(code of {basename(claimed) if type(claimed) is str else '?'})")
    return f"{event} (string or code evaluation, asked from {basename(asker)})"


def _compilation(args):
    """`compile` is inert on its own, but the file name it gives the code decides whose frames that
    code runs in: with the candidate's code on the stack, only its own file, the names of strings
    (typing's forward references, dataclasses, Triton's binder) and Triton's files (its parser; the
    interpreter's rewrite) may be given. Code compiled under another module's name ran outside every
    rule keyed on the candidate's frames: numpy through TensorBase, a forged json.dumps (a
    SourceFileLoader subclass, our red team, 2026-12-04). Frames: 0 this, 1 _evaluation, 2 _denied,
    3 the hook, 4 the frame that raised the event."""
    if not _candidate_on_stack(4):
        return None
    filename = args[1] if len(args) > 1 else None
    if type(filename) is bytes:
        filename = fsdecode(filename)
    if filename is None:
        # compile() of an AST: Python reports no file name (3.11). The code still runs only through an
        # exec event, judged on its code object's co_filename (_evaluation), or by function or code
        # construction, which is refused.
        return None
    if type(filename) is not str:
        return "compile with a file name that is not a str"
    if filename in _STRING_FILENAMES:
        return None
    if _candidates_or_tritons(filename):
        return None
    return f"compile of code under the name {filename[:80]!r} (not the candidate's file)"


def _candidates_or_tritons(filename):
    """Is this file name the candidate's file or one of Triton's?"""
    real = realpath(filename)
    return real == CANDIDATE_FILE or real.startswith(TRITON_DIR)


_FRAME_READERS = (_frame_file, _frame_runs, _candidate_on_stack, _first_non_stdlib, _evaluator)
_SEALED_FUNCTIONS = (_hook, *_FRAME_READERS, _is_stdlib, _path_ok, _path_event_ok, _denied, _evaluation, _compilation,
                     _candidates_or_tritons, _yields_frame, _toolchain_argv_ok)
_SEALED_CONSTANTS = ("_DENY_PREFIXES", "_PATH_EVENTS", "_PATH_EVENT_ARGS", "_PROCESS_EVENTS", "_TOOLCHAIN",
                     "_CC_DRIVERS", "_CC_FLAGS",
                     "_CC_FLAG_PREFIXES", "_LDCONFIG_ARGS", "_INTROSPECTION",
                     "_FRAME_ATTRIBUTES", "_FRAME_READING_STDLIB", "_OPEN_DENY_DIRS", "_HARMLESS_DEVICES",
                     "_INTERPRETER_FILE", "_STRING_FILENAMES", "_UNPICKLE_PACKAGES")
