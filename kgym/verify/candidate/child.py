"""The candidate's process: loads one candidate, runs the forwards and timings the parent asks for.

Started by `kgym.verify.parent.sandbox` in a private temp dir with a scrubbed environment and a socket as
its only inherited descriptor: forked from the sandbox's zygote (`kgym.verify.candidate.zygote`, which calls
`after_fork` and `start` here) or, on the old path, as `python -m kgym.verify.candidate.child`. It warms
up (torch, Triton's
compiler, the device, the profiler), says `ready`, then serves commands:
  load     write the candidate to candidate.py, arm the tripwires, import it, build ModelNew
  forward  run one forward on buffers the parent lent, under the guard (and the profiler), copy the
           output into the parent's output buffer, report launches and violations
  time     time forwards under gate 5's protocol, in lockstep with the parent: before each run the
           parent writes a fresh draw of the inputs into the lent buffers and says `run`; after it
           the child copies the output out (every run: the parent judges every output)
           and answers `ran`. Every run is guarded and the whole batch is profiled (device kernels
           included on a GPU)
  exit
Everything this process reports is treated by the parent as a claim of a possibly hostile process:
only rejections and measured values are read from it; correctness is decided in the parent.

The runtime rules (docs/verify.md, "Runtime rules") as they apply here: the dispatch guard is pushed
before the candidate is imported and never popped, so every call into candidate code on this thread
(import, __init__, forward, hooks, finalizers, methods of returned objects) runs under it; after
load the harness computes nothing but the kept-state check's byte comparison, made between its calls
in the guard's "harness" phase (`guard.HARNESS_OPS`); values the candidate hands over are read
through exact types and `accessors` only; no other thread may start (counted by the OS); candidate code
and Triton launches run only inside the harness's calls (`outside.CallWindow`: a profile hook and the
launch hook refuse them in between, where automatic gc is off); no mode is left on a stack when
forward returns (checked before the harness reads its output); no forward reads state an earlier one
wrote (`kept_state.KeptState`: the candidate's kept storages copied at load, compared after every
verified forward and timed batch, written ones poisoned before every forward, the state after load
put back before every timed run; a written parameter fails).
"""

from __future__ import annotations

import importlib.util
import itertools
import linecache
import os
import resource
import socket
import sys
import time
import traceback
import types
from pathlib import PurePath
from typing import Any

import torch

from kgym.verify import accessors, timing
from kgym.verify.candidate import profile_events
from kgym.verify.candidate.audit import AuditTripwire
from kgym.verify.candidate.confine import applies, confine, gpu_device_files, no_new_processes
from kgym.verify.candidate.frontend import FrontendCheck
from kgym.verify.candidate.guard import (
    MODE_RANGE,
    SPAN_MARK_PREFIX,
    ComputeGuard,
    IsolationViolation,
    construction_budget,
    forbidden_profiled_ops,
    unjudged_dispatches,
    unrecorded_span,
)
from kgym.verify.candidate.kept_state import KeptState, lent_keys
from kgym.verify.candidate.launches import (
    LaunchCounter,
    LaunchRefused,
    device_kernel_names,
    kernel_counts,
    tensor_storages,
    working_streams,
)
from kgym.verify.candidate.library import holds_reference_values
from kgym.verify.candidate.outside import CallWindow
from kgym.verify.candidate.provenance import Provenance
from kgym.verify.candidate.python_data import PythonData
from kgym.verify.precision import exact_fp32
from kgym.verify.shared import open_handle
from kgym.verify.wire import recv_command, send_reply

MAX_TEXT = 4000
_write = os.write
_no_grad = torch.no_grad
_issubclass = issubclass
_Module = torch.nn.Module
_synchronize = torch.cuda.synchronize
_sleep = torch.cuda._sleep
_WARM_CYCLES = 200_000  # ~0.1 ms of GPU spin that brings the clocks up after the lockstep's idle wait
_Activity = torch.profiler.ProfilerActivity
# The profiler's session, driven through torch's C functions bound here (`_Session`); the audit hook's doors
# replace these bindings with wrappers that refuse them to the candidate.
_prepare_profiler = torch._C._autograd._prepare_profiler
_enable_profiler = torch._C._autograd._enable_profiler
_disable_profiler = torch._C._autograd._disable_profiler
_ProfilerConfig = torch._C._profiler.ProfilerConfig
# torch's Python flag "a profiler is on" (what its start and stop hooks set), written as torch writes it, item by
# item into the module's namespace: no code of torch.autograd.profiler is run or looked up.
_set_profiler_global = vars(torch.autograd.profiler).__setitem__
# torch's factory and dtype for the harness's own tensors between the candidate's calls (the poison, the
# calibration's), bound here: `torch.empty` looked up at call time is a module attribute the candidate rebinds.
_torch_empty = torch.empty
_FLOAT32 = torch.float32
_KINETO = torch._C._profiler.ProfilerState.KINETO
# The mark every profiled span opens with (a C type: its methods cannot be rebound), and the nonce's source.
_SpanRange = torch._C._profiler._RecordFunctionFast
_urandom = os.urandom
# Bound before any candidate code exists: how many torch-function modes are on the stack (a C function).
_len_function_stack = torch._C._len_torch_function_stack


def _make_report() -> Any:
    """The tripwires' append-only channel to the parent (a pipe): one line per violation."""
    fd = int(os.environ.get("KGYM_REPORT_FD", "-1"))

    def report(gate: str, reason: str) -> None:
        line = f"{gate}\t{reason}".replace("\n", " ")[:2000] + "\n"
        try:
            _write(fd, line.encode(errors="replace"))
        except OSError:
            pass

    return report


def _tail(text: str, n: int = MAX_TEXT) -> str:
    return text if len(text) <= n else "..." + text[-n:]


def _error_kind(exc: BaseException) -> str:
    """Errors raised from inside Triton are compile errors; the guard's are isolation; others crash."""
    if type(exc) is IsolationViolation or type(exc) is LaunchRefused:
        return "isolation"
    if type(exc) is PermissionError and "kgym sandbox" in str(exc):
        return "policy"
    tb = exc.__traceback__
    module = type(exc).__module__ or ""
    if type(module) is str and module.startswith("triton"):
        return "compile"
    while tb is not None:
        if "/triton/compiler/" in tb.tb_frame.f_code.co_filename:
            return "compile"
        tb = tb.tb_next
    return "crash"


def _data_bytes() -> int:
    """This process's private writable memory (VmData), what RLIMIT_DATA is counted against."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("/proc/self/status has no VmData line")


def os_thread_count() -> int:
    """The number of threads of this process as the kernel counts them (not `threading`'s count,
    which misses threads started through `_thread` or from C)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise RuntimeError("/proc/self/status has no Threads line")


def _experimental_config(all_threads: bool = True) -> Any:
    """The profiler's experimental config: recording the ops of every thread, not only the profiling one,
    where asked and this torch knows the option (>= 2.7); else torch's default."""
    from torch._C._profiler import _ExperimentalConfig

    if all_threads:
        try:
            return _ExperimentalConfig(profile_all_threads=True)
        except TypeError:
            pass
    return _ExperimentalConfig()


class _Session:
    """One profiled span of the harness's: torch's Kineto profiler session started and stopped through its C
    functions bound at import (what `torch.profiler.profile` ends up calling: prepare, enable, disable), its
    results kept for `profile_events.events` (which reads `prof.profiler.kineto_results`). Why not torch's
    `torch.profiler.profile`: its Python (`__enter__` calling `self.start()`, `_start_trace` calling the module
    global `_run_on_profiler_start` before the session is on, `__exit__` `_run_on_profiler_stop` after it is
    off) looks up class attributes and module globals at each call, which the candidate rebinds with no audit
    event; builtins planted there ran between its calls, unjudged and unprofiled (test_profiler_class_rebound.py).
    A kgym class: its attributes are in the harness's fingerprint."""

    __slots__ = ("config", "activities", "device", "kineto_results")

    def __init__(self, activities: list, experimental_config: Any, device: torch.device):
        self.config = _ProfilerConfig(_KINETO, False, False, False, False, False, experimental_config, "")
        self.activities = set(activities)
        self.device = device
        self.kineto_results = None

    @property
    def profiler(self) -> _Session:
        return self

    def events(self) -> list:
        """The fallback reader's answer where the C events cannot be read: none (the span's mark is then
        missing, and the span fails)."""
        return []

    def __enter__(self) -> _Session:
        _prepare_profiler(self.config, self.activities)
        _set_profiler_global("_is_profiler_enabled", True)
        _enable_profiler(self.config, self.activities)
        return self

    def __exit__(self, *exc: Any) -> bool:
        if self.device.type == "cuda":
            _synchronize(self.device)
        self.kineto_results = _disable_profiler()
        _set_profiler_global("_is_profiler_enabled", False)
        return False


class Child:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.device = torch.device(os.environ.get("KGYM_DEVICE", "cpu"))
        exact_fp32()
        self.workdir = os.getcwd()
        self.model: torch.nn.Module | None = None
        self.hybrid = False
        self.counter = LaunchCounter()
        self.kernels_per_forward = 1  # device kernels of the last verified forward (the calibration's)
        self.provenance = Provenance()
        self.audit: AuditTripwire | None = None
        self.guard: ComputeGuard | None = None
        self.kept: KeptState | None = None  # the candidate's kept storages (kept_state.py), from load
        self.snapshot: dict[str, Any] = {}
        self.threads_at_load = 0
        self.report = _make_report()
        self.reported: set[str] = set()
        self.model_storages: list[int] = []  # storages of ModelNew's parameters, read at load
        self.buffer_storages: list[int] = []  # and of its buffers (roles of a hybrid's library operands)
        # A hybrid's: the reference's parameters and buffers (and transposes), lent by the parent at load,
        # ModelNew's parameters and buffers by storage, and those already found to hold reference values.
        self.reference_values: list[torch.Tensor] = []
        self.state_tensors: dict[int, torch.Tensor] = {}
        self.values_checked: set[int] = set()
        self.profiler_config = _experimental_config()
        # Does this torch record a range for each op handed to a Python dispatch mode? (warm_up: seen
        # before any candidate exists; until then the dispatch count passes a profile with none.)
        self.records_mode_range = False
        self.harness: dict[str, tuple] = {}  # _harness_state() when the candidate was imported
        self.harness_modules: tuple[str, ...] = ()  # the names of kgym's modules then, in sys.modules' order
        self.window = CallWindow(self.report)  # candidate code and launches only inside our calls

    # --- start-up -------------------------------------------------------------------------
    def warm_up(self) -> float:
        """The device part of start-up (CUDA context, Triton's first compile and launch, the
        profiler). It waits for the parent's `warm` so that it never overlaps a timed run. Thread
        pools that torch starts lazily (intra-op, BLAS) are started here, so that the thread count
        taken at load is the harness's own."""
        t0 = time.perf_counter()
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
        sys.path.insert(0, os.path.dirname(__file__))
        import warmup_kernel  # noqa: E402 - a file of our own, so Triton can read its source

        x = torch.zeros(1000, device=self.device)
        warmup_kernel.add_one_kernel[(1,)](x, 1000, BLOCK=1024)
        from triton.runtime.interpreter import InterpretedFunction

        if type(warmup_kernel.add_one_kernel) is InterpretedFunction:  # CPU: a GPU front end checks kernels
            self.counter.frontend_check.prepare(warmup_kernel.add_one_kernel, (x, 1000), {"BLOCK": 1024})
        big = torch.ones(1 << 21)
        big.add_(1).sum()
        torch.mm(big[:1 << 16].view(256, 256), big[:1 << 16].view(256, 256))
        big.to(self.device).copy_(big)
        del big
        # The first op under a dispatch mode pays one-time set-up (torch wraps __torch_dispatch__ on
        # first use; ~1 s on a loaded CPU): paid here, not in the candidate's load.
        with ComputeGuard(False, self.device.type):
            torch.empty(4, device=self.device).fill_(0).clone()
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        try:
            with self._profiler():
                warmup_kernel.add_one_kernel[(1,)](x, 1000, BLOCK=1024)
        except RuntimeError:  # this torch cannot record every thread: the profiling thread only
            self.profiler_config = _experimental_config(all_threads=False)
            with self._profiler():
                warmup_kernel.add_one_kernel[(1,)](x, 1000, BLOCK=1024)
        # Before any candidate: does this torch's profiler record the dispatch-mode range (and the span
        # mark)? Where it does, a profiled span with no range is refused (`unjudged_dispatches`).
        prof = self._profiler(device=False)
        with prof:
            mark = self._mark_span()
            with ComputeGuard(False, self.device.type):
                torch.empty(4, device=self.device)
        names = {evt.name for evt in profile_events.events(prof)}
        if mark not in names:
            raise RuntimeError("kgym: the profiler did not record the harness's span mark at warm-up")
        self.records_mode_range = MODE_RANGE in names
        sys.path.remove(os.path.dirname(__file__))
        return time.perf_counter() - t0

    @staticmethod
    def _mark_span() -> str:
        """The first thing inside every profiled span: a range named with a fresh nonce, which the
        profile's events must hold (`unrecorded_span`): a profiler that recorded nothing, or whose results
        were replaced, cannot show it. Returns its name."""
        mark = SPAN_MARK_PREFIX + _urandom(8).hex()
        with _SpanRange(mark):
            pass
        return mark

    def _activities(self) -> list:
        acts = [_Activity.CPU]
        if self.device.type == "cuda":
            acts.append(_Activity.CUDA)
        return acts

    def _profiler(self, device: bool = True) -> Any:
        """The profiler of a forward or a batch; `device=False`: host ops alone (the construction's count)."""
        activities = self._activities() if device else [_Activity.CPU]
        return _Session(activities, self.profiler_config, self.device)

    def _limit_memory(self, limit_bytes: int) -> None:
        if limit_bytes <= 0:
            return
        if self.device.type == "cuda":
            total = torch.cuda.get_device_properties(self.device).total_memory
            torch.cuda.set_per_process_memory_fraction(min(1.0, limit_bytes / total), self.device)
            # The host too: a 4 TB torch.empty on the CPU passed on an H200 host with no cap. CUDA
            # reserves terabytes of address space, so RLIMIT_AS cannot be used; RLIMIT_DATA counts
            # only private writable memory (malloc, anonymous mmap), not the driver's reservations.
            cap = _data_bytes() + limit_bytes
            resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
        else:
            with open("/proc/self/statm") as f:
                vm = int(f.read().split()[0]) * resource.getpagesize()
            cap = vm + limit_bytes
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    def _take_snapshot(self) -> None:
        self.snapshot = _critical_objects()
        self.snapshot_codes = _codes(self.snapshot)

    def _tampering(self) -> list[str]:
        now = _critical_objects()
        found = [f"{k} was replaced" for k, v in now.items() if self.snapshot.get(k) is not v]
        found += [f"the code of {k} was replaced" for k, code in _codes(now).items()
                  if self.snapshot_codes.get(k) is not code]
        found += _harness_changes(self.harness, _harness_state(self.harness_modules)) if self.harness else []
        if not self.counter.intact():
            found.append("Triton's launch hook was removed")
        if self.audit is not None and not self.audit.intact():
            found.append("the import guard or a tensor tripwire was removed")
        if self.guard is not None and not self.guard.stack_intact():
            found.append("the dispatch guard is no longer the only mode on the stack")
        if _len_function_stack():
            found.append("a torch-function mode is on the stack")
        if self.guard is not None and self.model is not None and (
                self.guard.phase != "run" or self.counter.constructing or self.guard.hybrid is not self.hybrid
                or self.guard.provenance is not self.provenance or self.counter.provenance is not self.provenance):
            found.append("the dispatch guard's or the launch hook's state was changed")
        if self.window.candidate_globals is not None:
            found += self.window.intact()
        if self.guard is not None and self.model is not None and (
                type(self.kept) is not KeptState or self.kept.guard is not self.guard):
            found.append("the harness's record of the kept state was replaced")
        if self.threads_at_load and os_thread_count() > self.threads_at_load:
            found.append("the candidate started a thread (the OS counts more threads than at load)")
        for f in found:
            if f not in self.reported:
                self.reported.add(f)
                self.report("isolation", f"tampering: {f}")
        return found

    def _open(self, handle: Any) -> Any:
        """A buffer the parent lent (only allocation, set_ and views: allowed by the guard)."""
        return open_handle(handle) if _is_handle(handle) else handle

    # --- commands ---------------------------------------------------------------------------
    def load(self, msg: dict[str, Any]) -> dict[str, Any]:
        path = os.path.join(self.workdir, "candidate.py")
        with open(path, "w", encoding="utf-8") as f:  # the text the policy checked, as the import decodes it
            f.write(msg["source"])
        self.hybrid = msg.get("hybrid", False)  # False, or the hybrid allowance (truthy)
        try:
            if msg.get("lent_dir") and applies(self.device.type):  # confine.py's second layer: the lent dir,
                # whose files the parent maps too: written in place only, never truncated, nothing created
                _confined["abi"] = confine([self.workdir], _device_files(), lent=[str(msg["lent_dir"])])
            if self.device.type == "cpu":  # the interpreter runs no toolchain: no process from here on (confine.py)
                _confined["no_processes"] = no_new_processes()
            self._limit_memory(int(msg.get("memory_limit_bytes", 0)))
            # before the guard and any candidate code: the parent's copies of the reference's state
            self.reference_values = [self._open(h) for h in msg.get("reference_values") or []]
            self.counter.install()
            self.counter.report = self.report
            self.counter.provenance = self.provenance
            self._take_snapshot()
            self.threads_at_load = os_thread_count()
            # built before the audit hook (it makes its seat's dispatch function: guard.py), pushed below
            self.guard = ComputeGuard(self.hybrid, self.device.type, self.report)
            self.audit = AuditTripwire(path, self.workdir, self.report)
            self.audit.profile_setters = self.window.setters
            self.counter.window = self.window
            counter = self.counter
            self.audit.interpreter_rewriting = lambda: counter.rewriting
            self.audit.install()
            self.guard.provenance = self.provenance
            self.guard.interpreting = lambda: counter.interpreting
            # the arithmetic the reference's construction did and the Python data it handed torch: the
            # candidate's may do the same, no more
            construction = msg.get("construction") or {}
            self.guard.construction_ops = construction_budget(construction.get("ops"))
            self.guard.construction_data = PythonData.from_message(construction.get("python_data"))
            self.kept = KeptState(self.guard)
            # Pushed for good: from here until the process exits, every op on this thread is judged.
            self.guard.phase = "init"
            self.counter.constructing = True  # no Triton launch until ModelNew is built (launches.py)
            self.guard.__enter__()
            self.harness_modules = _harness_modules()
            self.harness = _harness_state(self.harness_modules)
        except Exception:  # noqa: BLE001 - no candidate code has run yet: a failure of kgym
            return {"op": "internal", "phase": "before_candidate", "reason": _tail(traceback.format_exc())}
        error: BaseException | None = None
        # The construction is profiled like every forward, for the dispatch count alone (the guard's
        # second layer, `unjudged_dispatches`): a seat's class attribute rebound in __init__ and put back
        # left a table of torch.sigmoid over every fp16 input unjudged (red team, 2026-12-07).
        prof = self._profiler(device=False)
        handled = self.guard.handled()
        try:
            with prof:
                mark = self._mark_span()
                spec = importlib.util.spec_from_file_location("candidate", path)
                module = importlib.util.module_from_spec(spec)
                sys.modules["candidate"] = module
                self.window.arm(module.__dict__)  # inside from here: import, __init__, .to()
                spec.loader.exec_module(module)
                model_cls = module.__dict__.get("ModelNew")
                if model_cls is None:
                    return {"op": "error", "gate": "compile", "reason": "the candidate defines no ModelNew"}
                torch.manual_seed(int(msg["seed"]))
                model = model_cls(*msg["init_inputs"])
                if not _issubclass(type(model), _Module):
                    return {"op": "error", "gate": "compile", "reason": "ModelNew is not a torch.nn.Module"}
                model = model.to(self.device)
                if not _issubclass(type(model), _Module):
                    return {"op": "error", "gate": "compile", "reason": "ModelNew.to() did not return a Module"}
                self.model = model
                self.model_storages = self._parameter_storages(model, self.state_tensors)
                self.buffer_storages = self._parameter_storages(model, self.state_tensors, buffers=True)
            events = profile_events.events(prof)
            for why in unjudged_dispatches(events, self.guard.handled() - handled, self.records_mode_range) \
                    + unrecorded_span(events, mark):
                self.guard.record(why)  # still in the init phase: refused as construction
        except BaseException as e:  # noqa: BLE001 - anything the candidate raises is a verdict
            error = e
        finally:
            if self.guard is not None:
                self.guard.phase = "run"
            self.counter.constructing = False
            if self.window.candidate_globals is not None:
                self.window.leave()  # before any reply: from here the candidate runs only in forward
                self.window.collect()
        if error is not None:
            return self._error_reply(error, default_gate="compile")
        if self.counter.launches:  # the hook's refusal bypassed (its flag changed): still refused
            self.counter.refusals.append(f"a Triton kernel launched while the candidate was imported or built "
                                         f"({self.counter.launches} launches past the launch hook's refusal)")
        problems = self._violations()
        if problems:
            return {"op": "error", **problems}
        # The state after load: what every later forward must find as it was, or poisoned (kept_state.py).
        problem = self.kept.capture(self.model, self.window.candidate_globals)
        if problem is not None:
            return {"op": "error", "gate": "isolation", "reason": problem}
        problems = self._violations()
        if problems:
            return {"op": "error", **problems}
        return {"op": "loaded", "state_s": self.kept.seconds}

    def _parameter_storages(self, model: torch.nn.Module, tensors: dict[int, torch.Tensor],
                            buffers: bool = False) -> list[int]:
        """Storages of the parameters, or of the buffers (candidate code may run here: it is under the
        guard); each storage's tensor goes into `tensors`."""
        ptrs = []
        for p in list(model.buffers() if buffers else model.parameters()):
            if not accessors.is_plain_tensor(p):
                raise IsolationViolation("kgym: a parameter of ModelNew is a tensor subclass")
            ptrs.append(accessors.storage_ptr(p))
            tensors.setdefault(ptrs[-1], p)
        return ptrs

    def _library_operand_values(self) -> str | None:
        """Between calls (the guard's harness phase): every parameter or buffer a hybrid's library call
        took as an operand (itself or a whole copy) holds the values of one of the reference's (library.py,
        `holds_reference_values`). Forwards cannot write parameters (kept_state.py), so each is checked once."""
        todo = [p for p in self.guard.library_params if p not in self.values_checked]
        if not todo:
            return None
        self.guard.phase = "harness"
        try:
            for ptr in todo:
                t = self.state_tensors.get(ptr)
                if t is None or not holds_reference_values(t, self.reference_values):
                    return ("the hybrid library call takes a parameter of ModelNew that holds values none of the "
                            "reference's parameters or buffers hold: the one library call must compute what the "
                            "reference's own call computes, on the reference's parameters (a parameter built "
                            "otherwise, such as one drawn with scaled bounds, folds the epilogue into the call)")
                self.values_checked.add(ptr)
            return None
        finally:
            self.guard.phase = "run"

    def _violations(self) -> dict[str, Any] | None:
        """The tripwires' verdict so far: None, or the gate and reason to fail."""
        if self.audit is not None and self.audit.violations:
            return {"gate": "policy", "reason": "sandbox: " + "; ".join(self.audit.violations[:5])}
        if self.guard is not None and self.guard.violations:
            return {"gate": "isolation", "reason": f"PyTorch computed {self.guard.where()}: "
                    + ", ".join(dict.fromkeys(self.guard.violations))}
        if self.counter.refusals:
            return {"gate": "isolation", "reason": "launch refused: " + "; ".join(self.counter.refusals[:3])}
        if self.window.violations:
            return {"gate": "isolation", "reason": "; ".join(self.window.violations[:3])}
        tamper = self._tampering()
        if tamper:
            return {"gate": "isolation", "reason": "tampering: " + "; ".join(tamper)}
        return None

    def _error_reply(self, exc: BaseException, default_gate: str) -> dict[str, Any]:
        problems = self._violations()
        if problems:
            return {"op": "error", **problems}
        kind = _error_kind(exc)
        if kind == "crash" and default_gate == "compile":
            kind = "compile"
        return {"op": "error", "gate": kind, "reason": _tail(_format_exception(exc))}

    def _call(self, inputs: list[Any]) -> Any:
        """One forward. The guard is on the stack already (since load); the per-forward state is
        reset: one library call allowed, storages tracked for the output-provenance rule."""
        self.guard.library_calls.clear()
        # the roles a hybrid's library call may take its operands from (library.py's call rule)
        roots = {p: "param" for p in self.model_storages + self.buffer_storages}
        roots.update({accessors.storage_ptr(x): f"input:{i}" for i, x in enumerate(inputs)
                      if accessors.is_plain_tensor(x)})
        self.provenance.roots = roots
        self.provenance.reset()
        self.provenance.protected = set(self.model_storages)
        self.provenance.protected.update(accessors.storage_ptr(x) for x in inputs if accessors.is_plain_tensor(x))
        self.guard.call_data = PythonData()  # the Python data this forward hands torch (python_data.py)
        self.window.enter()
        try:
            with _no_grad():
                return self.model(*inputs)
        finally:
            self.window.leave()
            self.guard.call_data = None

    def _modes_after_call(self) -> str | None:
        """Right after a call of forward, before the harness reads anything it returned: the dispatch
        guard is the only dispatch mode and no torch-function mode is on the stack. A mode left there
        runs its handler inside the harness's reads of the output (a shape, the copy into the lent
        buffer), untimed: a forward that launched an empty kernel did its work there (2026-12-06).
        Checked before the first read, so a handler that pops itself never runs. Two C calls."""
        if _len_function_stack():
            return "a torch-function mode was left on the stack after forward() returned"
        if self.guard is not None and not self.guard.stack_intact():
            return "a dispatch mode was left on the stack after forward() returned"
        return None

    def _check_output(self, out: Any, inputs: list[Any], expect: torch.Tensor) -> tuple[dict, str | None, str]:
        """Type, device, aliasing, shape, dtype and provenance of what forward returned, read through
        exact types and early-bound accessors only. Returns (meta, problem, gate of the problem)."""
        if not accessors.is_plain_tensor(out):
            name = _type_name(out)
            return {"type": name}, (f"forward() returned {name}, not a plain torch.Tensor (a subclass or "
                                    "another object is refused, never inspected)"), "isolation"
        shape, dtype, dev = tuple(accessors.shape(out)), accessors.dtype(out), accessors.device(out)
        meta = {"type": "Tensor", "shape": list(shape), "dtype": str(dtype).removeprefix("torch."),
                "device": str(dev)}
        if dev.type != self.device.type:
            return meta, f"output is on {dev}, expected {self.device.type}", "correctness"
        if self.device.index is not None and dev.index != self.device.index:
            # Another visible GPU: its work is on no stream the harness times or synchronizes (the
            # events and the wall clock's synchronize are the timed device's), and the copy out waits
            # for it untimed. "Every device activity runs on the timed device's timed stream."
            return meta, f"output is on {dev}, not on {self.device}, the device the harness times", "isolation"
        if accessors.is_sparse(out) or accessors.layout(out) != torch.strided:
            return meta, "output is not a dense strided tensor", "isolation"
        out_ptr, out_end = accessors.storage_span(out)
        for x in inputs:
            if accessors.is_plain_tensor(x):
                s, e = accessors.storage_span(x)
                if out_ptr < e and s < out_end:
                    return meta, "output shares storage with an input (return a new tensor)", "isolation"
        if shape != tuple(accessors.shape(expect)):
            return meta, f"output shape {shape} != expected {tuple(accessors.shape(expect))}", "correctness"
        if dtype != accessors.dtype(expect):
            return meta, f"output dtype {dtype} != expected {accessors.dtype(expect)}", "correctness"
        if not self.provenance.written_by_triton(out_ptr):
            return meta, ("the output was not written by a Triton kernel of this forward (its storage was "
                          "never a launch argument, or torch copied into it from an input or a parameter)"), \
                "isolation"
        return meta, None, ""

    def _unknown_launch_storages(self, lent: list[Any]) -> str | None:
        """Every tensor a Triton kernel of this forward took views a storage the harness knows: one it lent,
        or one the guard saw an op of the candidate's make (at construction or in a forward: parameters,
        buffers, kept state and scratch all are; a hybrid's library result is in this forward's fresh
        storages) and still alive. A storage made where the guard judged
        nothing (its seat answered by another handler between the candidate's calls, by a chain of builtins
        planted in a global the harness looks up) holds work no rule saw: test_profiler_class_rebound.py."""
        spans = [accessors.storage_span(x) for x in lent if accessors.is_plain_tensor(x)]
        made = self.kept.made if self.kept is not None else None
        fresh = set(self.provenance.fresh)  # made in this forward, as the guard told the provenance tracker
        for start in tensor_storages(self.counter.calls):
            if start == 0 or start in fresh or any(s <= start < e for s, e in spans) \
                    or (made is not None and made.knows(start)):
                continue
            return ("a Triton kernel took a tensor over a storage no op of the candidate's made under the dispatch "
                    "guard and the harness did not lend (computed where the guard judged nothing)")
        return None

    def _take_output(self, out: Any, inputs: list[Any],
                     expect: torch.Tensor) -> tuple[str | None, dict, str | None, str]:
        """Right after forward() returned, inside its profiled span, before the harness runs any other code:
        the mode check, the output's checks and its copy into the lent buffer. Returns (mode left on the
        stack, meta, problem, gate of the problem). Why here: what the harness runs after the span (the
        profiler's exit, torch's Python with module globals and class attributes the candidate can rebind;
        the profile's reading) ran builtins the candidate planted (`torch.autograd.profiler._run_on_profiler_stop`
        as a chain of partials) with the seat rebound to torch's pass-through: torch wrote the answer into the
        output after the profiler stopped and before it was copied out, then the chain put the seat back
        (test_profiler_class_rebound.py). From here on nothing changes the bytes the parent judges, and
        everything up to here is profiled."""
        mode_left = self._modes_after_call()  # before any read of `out` (its handler would run there)
        if mode_left is not None:
            return mode_left, {}, None, ""
        meta, problem, gate = self._check_output(out, inputs, expect)
        if problem is None:
            accessors.copy_(expect, out)
            if self.device.type == "cuda":
                _synchronize(self.device)
        return None, meta, problem, gate

    def _judge_profile(self, prof: Any, runs: int, handled: int,
                       mark: str) -> tuple[list[str], int, dict[str, int], list[str]]:
        """Forbidden aten ops (every thread, nested ones too), library calls, device kernel counts
        and names of one profiled span of `runs` forwards, in which the guard's sealed dispatch judged
        `handled` ops (`unjudged_dispatches`), opened with the range `mark` (`unrecorded_span`)."""
        events = profile_events.events(prof)  # torch's events and tree, without its FunctionEvents
        forbidden, library = forbidden_profiled_ops(events, self.hybrid)
        forbidden += unjudged_dispatches(events, handled, self.records_mode_range)
        forbidden += unrecorded_span(events, mark)
        if self.hybrid and runs > 1:  # one library call per forward
            forbidden = [f for f in forbidden if not f.endswith("(second library call)")]
            if library > runs:
                forbidden.append(f"{library} library calls in {runs} forwards")
        names: list[str] = []
        if self.device.type == "cuda":
            names = device_kernel_names(events)
            forbidden += [n for n in dict.fromkeys(names) if "DtoH" in n or "HtoD" in n]
            streams = working_streams(events)
            if len(streams) > 1:
                where = "; ".join(f"stream {k}: {', '.join(v[:3])}" for k, v in streams.items())
                forbidden.append(f"device work on {len(streams)} streams ({where}): every kernel, copy and "
                                 "fill must run on the stream the harness times")
        return forbidden, library, kernel_counts(names, self.counter.names), names

    def forward(self, msg: dict[str, Any]) -> dict[str, Any]:
        inputs = [self._open(x) for x in msg["inputs"]]
        expect = self._open(msg["output"])
        lent = lent_keys([*inputs, expect])
        state_s = self.kept.seconds
        # Untimed, unprofiled, outside the call: what an earlier forward wrote is poisoned (kept_state.py).
        problem = self.kept.prepare(lent, restore=False)
        if problem is not None:
            return {"op": "error", "gate": "isolation", "reason": problem}
        self.counter.reset()
        reply: dict[str, Any] = {"op": "forward_done"}
        prof = None
        try:
            if msg.get("profile"):
                prof = self._profiler()
                handled = self.guard.handled()
                with prof:
                    mark = self._mark_span()
                    out = self._call(inputs)
                    if self.device.type == "cuda":
                        _synchronize(self.device)
                    taken = self._take_output(out, inputs, expect)
                handled = self.guard.handled() - handled
            else:
                out = self._call(inputs)
                taken = self._take_output(out, inputs, expect)
        except BaseException as e:  # noqa: BLE001
            return self._error_reply(e, default_gate="crash")
        mode_left = taken[0] or self._modes_after_call()
        if mode_left is not None:
            return {"op": "error", "gate": "isolation", "reason": f"tampering: {mode_left}"}
        if self.device.type == "cuda":
            _synchronize(self.device)
        reply["launches"] = self.counter.launches
        reply["kernels"] = sorted(set(self.counter.kernels))
        reply["signature"] = self.counter.signature(inputs, out, self.provenance.fresh)
        if prof is not None:
            forbidden, library, counts, names = self._judge_profile(prof, 1, handled, mark)
            if self.device.type == "cuda":
                reply["device_kernels"] = sorted(set(names))
                reply["device_kernel_counts"] = counts
                self.kernels_per_forward = max(1, sum(counts.values()))
                forbidden += _foreign_device_kernels(counts, self.counter.kernels, library)
            for name in forbidden:
                self.guard.record(f"{name} (seen by the profiler)")
            reply["library_calls"] = library
        else:
            reply["library_calls"] = len(self.guard.library_calls)
        problems = self._violations()
        if problems:
            return {"op": "error", **problems}
        problem = self._unknown_launch_storages([*inputs, expect])
        if problem is not None:
            return {"op": "error", "gate": "isolation", "reason": problem}
        _, meta, problem, gate = taken  # read and copied out when forward() returned (`_take_output`)
        reply["out"] = meta
        if problem is not None:
            reply["problem"] = problem
            reply["problem_gate"] = gate
        nbytes = _storage_bytes(out)
        del out  # outside the call: a candidate frame or a launch a finalizer starts here is refused
        self.window.collect()  # the call's young cycles, after the output was copied: cleanup may run, not launch
        _poison(self.device, nbytes)
        problems = self._violations()
        if problems:
            return {"op": "error", **problems}
        problem = self._library_operand_values()
        if problem is not None:
            return {"op": "error", "gate": "isolation", "reason": problem}
        # What this forward wrote of the kept state: a parameter fails, anything else is scratch from now on.
        problem, scratch = self.kept.after_forward(lent)
        if problem is not None:
            return {"op": "error", "gate": "isolation", "reason": problem}
        reply["scratch"] = scratch[:8]
        reply["state_s"] = self.kept.seconds - state_s
        return reply

    def time(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Gate 5 in this process, in lockstep with the parent (see the module docstring). Every run
        is guarded and profiled; what differs between runs is only the draw of the inputs."""
        inputs = [self._open(x) for x in msg["inputs"]]
        check = self._open(msg["check"])
        lent = lent_keys([*inputs, check])
        state_s = self.kept.seconds
        runs, warmup = int(msg["runs"]), int(msg["warmup"])
        state: dict[str, Any] = {"i": None, "out": None, "nonce": None, "figures": None, "laid": False,
                                 "relaid": False}
        signatures: set[str] = set()
        # Where this process's share of each run goes, summed over the batch (ns; reported as seconds,
        # for the parent's stage split only: a claim that decides nothing): the wait for the parent's
        # `run` (its draw, its checks, the hop), the kept state's walk and put-back, the GPU's wake-up
        # and calibration run, the work after each run (checks, the copy out, the reply), the runs
        # themselves (the rest of the batch: L2 flush, hold, call, synchronize) and the GPU spin
        # queued by the holds of the calibration and timed runs (at the top clock).
        host_ns = {"wait": 0, "prepare": 0, "calibration": 0, "finish": 0, "runs": 0, "hold": 0}
        now_ns = timing._perf_counter_ns

        def finish_run() -> None:
            """Untimed, after a run: its signature and output checks, the output copied out (every
            run: the parent judges every output against the reference), then `ran` to the parent."""
            i, out = state["i"], state["out"]
            if i is None:
                return
            t0 = now_ns()
            laid, state["out"], state["laid"] = state["laid"], None, False
            mode_left = self._modes_after_call()  # before any read of `out`, as in forward
            if mode_left is not None:
                send_reply(self.sock, {"op": "ran", "i": i, "problem": f"tampering: {mode_left}",
                                       "problem_gate": "isolation", "nonce": state["nonce"]})
                state["i"] = None
                return
            if self.device.type == "cuda":
                _synchronize(self.device)
            signatures.add(self.counter.signature(inputs, out, self.provenance.fresh))
            _, problem, gate = self._check_output(out, inputs, check)
            if problem is None and not laid:  # every run: the parent judges every output (laid: copied, timed)
                accessors.copy_(check, out)
                if self.device.type == "cuda":
                    _synchronize(self.device)
            nbytes = _storage_bytes(out)
            del out
            # Untimed, after the output was read and copied: the call's young cycles (the
            # candidate's cleanup may run, not launch, and can no longer touch this run's output).
            self.window.collect()
            # Every run ends as a verified forward does: the memory its output held is poisoned, so the
            # next run's allocation of that size finds NaN, not this run's answer (a timed path that
            # stored only a diag_embed's diagonal found the previous run's zeros in its block).
            _poison(self.device, nbytes)
            # The run's figures go with it (a timed run's; None for a warm-up): the summary at the end
            # must repeat them, so rewriting the batch's lists later changes nothing already sent.
            send_reply(self.sock, {"op": "ran", "i": i, "problem": problem, "problem_gate": gate,
                                   "nonce": state["nonce"], "figures": state["figures"]})
            state["i"] = state["figures"] = None
            host_ns["finish"] += now_ns() - t0

        def before_each(i: int) -> None:
            finish_run()
            t0 = now_ns()
            cmd = recv_command(self.sock)
            t1 = now_ns()
            host_ns["wait"] += t1 - t0
            if cmd.get("op") != "run" or cmd.get("i") != i:
                raise RuntimeError(f"timing protocol: expected run {i}, got {str(cmd)[:200]}")
            state.update(i=i, nonce=cmd.get("nonce"))
            # Untimed (before the run's clock starts; on a GPU before its synchronize): scratch poisoned,
            # the state after load put back, so nothing a run wrote reaches the next (kept_state.py).
            problem = self.kept.prepare(lent, restore=True)
            if problem is not None:
                self.report("isolation", problem)
                raise IsolationViolation(f"kgym: {problem}")
            t2 = now_ns()
            host_ns["prepare"] += t2 - t1
            if cuda:
                # The GPU idled while the parent drew and checked; a timed run straight after would
                # pay the wake-up in wall time the events never see (0.11-0.22 ms a run on an H200,
                # read as hidden work, 2026-12-01). Wake it, then calibrate in the same rhythm: one
                # calibration run per timed run, right before it.
                _sleep(_WARM_CYCLES)
                ct, cw, cs, _ = timing.run_timed(calibration, device=self.device, runs=1, warmup=0,
                                                 hold=hold)
                calib_times.extend(ct)
                calib_walls.extend(cw)
                calib_spans.extend(cs)
                host_ns["calibration"] += now_ns() - t2
                host_ns["hold"] += 2 * hold.cycles * 1_000_000 // timing.HOLD_CYCLES_PER_MS
            self.counter.reset()

        def after_each(i: int, t: float, w: float, s: float) -> None:
            state["figures"] = [t, w, s]

        def fn() -> None:  # timed: the call, and the output put in the reference's layout (below)
            out = state["out"] = self._call(inputs)
            # The harness reads a run's output as the reference's contiguous layout. An output laid out
            # otherwise (a view that is expanded, overlapping, transposed or strided) is put in that
            # layout here, inside the timed window: the copy out after the run was untimed, and an
            # output written as one value per row and returned as an expanded view had the harness
            # write its every element (tests/exploits/test_lazy_output_layout.py). Only a plain
            # tensor of the check buffer's shape, dtype and device, and only with no mode left on a
            # stack (a handler would run in the copy); anything else is refused in finish_run.
            if (self._modes_after_call() is None and accessors.is_plain_tensor(out)
                    and not accessors.is_contiguous(out) and not accessors.is_sparse(out)
                    and accessors.layout(out) == torch.strided
                    and accessors.shape(out) == accessors.shape(check)
                    and accessors.dtype(out) == accessors.dtype(check)
                    and accessors.device(out) == accessors.device(check)):
                accessors.copy_(check, out)
                state["laid"] = state["relaid"] = True

        cuda = self.device.type == "cuda"
        # One hold for the calibration runs and the timed runs: it grows with the call's host path.
        hold = timing.Hold()
        tiny = _torch_empty(1, device=self.device)
        n_kernels = self.kernels_per_forward if cuda else 0
        calib_times: list[float] = []
        calib_walls: list[float] = []
        calib_spans: list[float] = []

        def calibration() -> None:
            # One more kernel once an output was put in the reference's layout inside the window (`fn`):
            # its copy kernel's tracing cost at the synchronize is then in the timed runs' wall time.
            for _ in range(n_kernels + (1 if cuda and state["relaid"] else 0)):
                tiny.zero_()

        prof = self._profiler()
        handled = self.guard.handled()
        try:
            with prof:
                mark = self._mark_span()
                # The calibration (nothing timed) runs under the same profiler: the host time the
                # profiler adds per run is in both, so it cancels out of the hidden-work check.
                # It launches as many (one-element fill) kernels per run as the verified forward ran
                # on the device: the profiler's device tracing costs host time per kernel at the
                # synchronize (0.11-0.22 ms per run on an H200 for 1-3 kernels, 2026-12-01), which a
                # calibration without kernels would count as the candidate's hidden work.
                # On a GPU the calibration runs are interleaved with the timed ones (before_each).
                if not cuda:
                    calib_times[:], calib_walls[:], calib_spans[:], _ = timing.run_timed(
                        calibration, device=self.device, runs=20, warmup=2)
                t_batch_ns = now_ns()
                times, walls, spans, clock = timing.run_timed(fn, device=self.device, runs=runs, warmup=warmup,
                                                              before_each=before_each, hold=hold,
                                                              after_each=after_each)
                finish_run()
                if self.device.type == "cuda":
                    _synchronize(self.device)
                t_runs_ns = timing._perf_counter_ns()
                host_ns["runs"] = t_runs_ns - t_batch_ns - sum(host_ns[k] for k in (
                    "wait", "prepare", "calibration", "finish"))
            handled = self.guard.handled() - handled
        except BaseException as e:  # noqa: BLE001
            return self._error_reply(e, default_gate="crash")
        # The profiler's collection (leaving the span) and the judging of its events, as one figure; the
        # collection overlaps the parent's check of the last run, the judging does not.
        profile_ns = timing._perf_counter_ns() - t_runs_ns
        cmd = recv_command(self.sock)  # the parent has checked the last run; the summary follows
        if cmd.get("op") != "finish":
            raise RuntimeError(f"timing protocol: expected finish, got {str(cmd)[:200]}")
        t_judge_ns = timing._perf_counter_ns()
        forbidden, _, counts, _ = self._judge_profile(prof, runs + warmup, handled, mark)
        profile_s = (profile_ns + timing._perf_counter_ns() - t_judge_ns) / 1e9
        for name in forbidden:
            self.guard.record(f"{name} (seen by the profiler in the timed runs)")
        problems = self._violations()
        if problems:
            return {"op": "error", **problems}
        problem = self._library_operand_values()
        if problem is None:
            problem, _ = self.kept.after_forward(lent)  # outside the profiled span: the comparison
        if problem is not None:
            return {"op": "error", "gate": "isolation", "reason": f"in the timed runs: {problem}"}
        reply = {"op": "timed", "times_ms": times, "wall_ms": walls, "clock": clock,
                 "state_s": self.kept.seconds - state_s, "span_ms": spans, "calib_times_ms": calib_times,
                 "calib_wall_ms": calib_walls,
                 "calib_span_ms": calib_spans,
                 "signatures": sorted(signatures), "forwards": runs + warmup, "profile_s": profile_s,
                 "split_s": {k: ns / 1e9 for k, ns in host_ns.items()}}
        if self.device.type == "cuda":
            reply["device_kernel_counts"] = counts
        return reply

    def serve(self) -> None:
        # Imports are done (host-only work); the device is touched only once the parent says so.
        first = recv_command(self.sock)
        if first.get("op") != "warm":
            return
        send_reply(self.sock, {"op": "ready", "pid": os.getpid(), "warm_s": self.warm_up(),
                               "confined": _confined["abi"]})
        handlers = {"load": self.load, "forward": self.forward, "time": self.time}
        while True:
            msg = recv_command(self.sock)
            if msg["op"] == "exit":
                return
            nonce = msg.get("nonce")
            try:
                reply = handlers[msg["op"]](msg)
            except Exception:  # noqa: BLE001 - after candidate code ran, the parent reads this as a crash
                reply = {"op": "internal", "phase": "after_candidate", "gate": "crash",
                         "reason": "harness error after the candidate ran:\n" + _tail(traceback.format_exc())}
            send_reply(self.sock, {**reply, "nonce": nonce})


def _format_exception(exc: BaseException, depth: int = 0) -> str:
    """A traceback as text without the traceback module: Python 3.11's formatter parses source lines
    (compile) to draw its carets, which the audit tripwire refuses once the candidate is loaded."""
    lines = []
    for link in ("__cause__", "__context__"):
        inner = getattr(exc, link, None)
        if depth < 3 and isinstance(inner, BaseException):
            lines.append(_format_exception(inner, depth + 1))
            lines.append("\nDuring handling of the above exception, another exception occurred:\n\n")
            break
    lines.append("Traceback (most recent call last):\n")
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        lines.append(f'  File "{code.co_filename}", line {tb.tb_lineno}, in {code.co_name}\n')
        source = linecache.getline(code.co_filename, tb.tb_lineno).strip()
        if source:
            lines.append(f"    {source}\n")
        tb = tb.tb_next
    try:
        message = str(exc)  # candidate code for its own exceptions: it runs under the guard
    except Exception:  # noqa: BLE001
        message = "<unprintable>"
    lines.append(f"{_type_name(exc)}: {message}\n")
    return "".join(lines)


def _foreign_device_kernels(counts: dict[str, int], triton_names: list[str], library_calls: int) -> list[str]:
    """Device kernels of a verified forward that are neither its Triton kernels (by exact name) nor
    copies and fills: compute that reached the GPU without the dispatcher (a jiterator kernel, a
    raw launch). A hybrid's library call launches kernels of its own; they pass only when the
    forward made one (the guard and the profiler judge the call itself)."""
    wanted = set(triton_names)
    foreign = [n for n in counts if n not in wanted]
    if foreign and not any(n in wanted for n in counts):
        # This Triton decorates device names: fall back to the prefix the launch gate uses.
        foreign = [n for n in foreign if not any(n.startswith(k + "_") for k in wanted)]
    if library_calls:
        return []
    return [f"device kernel {n[:120]} (not a Triton kernel of this forward)" for n in foreign]


_type_qualname = type.__dict__["__qualname__"].__get__


def _type_name(x: Any) -> str:
    """The class name of a candidate value, read through `type` (a metaclass cannot intercept it)."""
    name = _type_qualname(type(x))
    return name if type(name) is str else "?"


def _critical_objects() -> dict[str, Any]:
    """What the harness relies on; a candidate that replaces any of these is tampering."""
    from triton.runtime.jit import JITFunction

    return {
        "torch.cuda.Event": torch.cuda.Event,
        "torch.cuda.Event.record": torch.cuda.Event.record,
        "torch.cuda.Event.elapsed_time": torch.cuda.Event.elapsed_time,
        "torch.cuda.synchronize": torch.cuda.synchronize,
        "time.perf_counter": time.perf_counter,
        "time.perf_counter_ns": time.perf_counter_ns,
        "timing.measure": timing.measure,
        "timing._record": timing._record,
        "timing._elapsed_time": timing._elapsed_time,
        "timing._perf_counter_ns": timing._perf_counter_ns,
        "timing._synchronize": timing._synchronize,
        "timing.Measurement": timing.Measurement,
        "timing.run_timed": timing.run_timed,
        "timing.Hold": timing.Hold,
        "timing._Hold": timing._Hold,
        "timing._Event": timing._Event,
        "timing._sleep": timing._sleep,
        "timing._cover": timing._cover,
        "timing.refresh": timing.refresh,
        "timing.scales": timing.scales,
        "send_reply": send_reply,
        "open_handle": open_handle,
        "Child.time": Child.time,
        "Child.forward": Child.forward,
        "Child._call": Child._call,
        "Child._violations": Child._violations,
        "Child._check_output": Child._check_output,
        "torch.Tensor.copy_": torch.Tensor.copy_,
        "torch.nn.Module.__call__": torch.nn.Module.__call__,
        "JITFunction.__getitem__": JITFunction.__getitem__,
        "ComputeGuard": ComputeGuard,
        "LaunchCounter": LaunchCounter,
        "FrontendCheck": FrontendCheck,
        "Provenance": Provenance,
        "Child": Child,
        "KeptState": KeptState,
        **{f"accessors.{k}": v for k, v in vars(accessors).items() if not k.startswith("__")},
    }


_HARNESS_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the kgym package
# Module globals the harness itself changes after the candidate is imported.
_HARNESS_MUTABLE = frozenset({"kgym.verify.parent.reference._loaded"})


def _harness_module(mod: Any) -> dict | None:
    """The globals of `mod` if it is one of kgym's own modules (a plain module whose file lies in the
    kgym package: this file too, run as __main__), else None."""
    if type(mod) is not types.ModuleType:
        return None
    ns = mod.__dict__
    path = ns.get("__file__")
    if type(path) is not str or not path.startswith(_HARNESS_ROOT + os.sep):
        return None
    return ns


def _harness_modules() -> tuple[str, ...]:
    """The names under which kgym's own modules are in sys.modules now (at load), in its order."""
    return tuple(name for name, mod in list(sys.modules.items()) if _harness_module(mod) is not None)


def _harness_state(names: tuple[str, ...]) -> dict[str, tuple]:
    """Every global of kgym's own modules named `names` in this process (`_harness_modules` at load)
    and every attribute of the classes they define: name -> (the object, a copy of a mutable
    container's items, a function's code, defaults and closure). The harness reads its rules, channels
    and clocks from these at call time, so a candidate that reaches one of the modules (sys.modules
    through some handle) and replaces or edits any of them changes the verdict: `_harness_changes`
    names it. Read through the module and class dicts (no attribute lookup a candidate could
    intercept). Only the names kgym's modules had at load are looked up again (in sys.modules, with
    the same test): `_harness_changes` compares the keys of the state at load alone, so a module that
    appeared later changed nothing it compares, and one replaced under its name is read as it is now;
    walking all of sys.modules (~1,200 modules, torch's) was most of each check's time, under the
    child's profile hook ~15 ms of ~25, twice a verified forward."""
    state: dict[str, tuple] = {}
    for mod_name in names:
        ns = _harness_module(sys.modules.get(mod_name))
        if ns is None:
            continue
        for key, value in list(ns.items()):
            if key.startswith("__") or f"{mod_name}.{key}" in _HARNESS_MUTABLE:
                continue
            state[f"{mod_name}.{key}"] = _fingerprint(value)
            if type(value) is type and value.__dict__.get("__module__") == mod_name:
                for attr, member in list(value.__dict__.items()):
                    state[f"{mod_name}.{key}.{attr}"] = _fingerprint(member)
    return state


def _fingerprint(value: Any) -> tuple:
    """The objects that make up `value` as the harness uses it, compared by identity only (no
    __eq__ of anything a candidate may have put there is called)."""
    t = type(value)
    if t is dict:
        return (value, *itertools.chain.from_iterable(value.items()))
    if t is list or t is set:
        return (value, *value)
    if t is types.FunctionType:
        return (value, value.__code__, value.__defaults__, value.__kwdefaults__, value.__closure__)
    return (value,)


def _harness_changes(before: dict[str, tuple], now: dict[str, tuple]) -> list[str]:
    found = []
    for key, old in before.items():
        new = now.get(key)
        if new is None:
            found.append(f"{key} was removed")
        elif len(new) != len(old) or any(a is not b for a, b in zip(old, new)):
            found.append(f"{key} was replaced or changed")
    return found


def _codes(objects: dict[str, Any]) -> dict[str, Any]:
    """The code objects of the functions among `objects` (and of the methods of the classes): a
    function can keep its identity while its __code__ is swapped."""
    codes = {}
    for k, v in objects.items():
        if hasattr(v, "__code__"):
            codes[k] = v.__code__
        elif isinstance(v, type):
            for name, member in vars(v).items():
                if hasattr(member, "__code__"):
                    codes[f"{k}.{name}"] = member.__code__
    return codes


def _is_handle(x: Any) -> bool:
    from kgym.verify.shared import SharedHandle

    return isinstance(x, SharedHandle)


def _storage_bytes(out: Any) -> int:
    """The size of the whole storage behind a returned output: an output that views part of a larger
    allocation has the allocation poisoned, not a block of the view's size, which may be another one."""
    if not accessors.is_plain_tensor(out):
        return 0
    start, end = accessors.storage_span(out)
    return end - start


def _poison(device: torch.device, nbytes: int) -> None:
    """Fill the memory the last output held with NaN so a later torch.empty cannot find an answer."""
    if nbytes <= 0:
        return
    try:
        t = _torch_empty(nbytes // 4 or 1, dtype=_FLOAT32, device=device)
        t.fill_(float("nan"))
        del t
    except RuntimeError:
        pass


def after_fork(threads: int | None = None, zygote_dir: str | None = None) -> None:
    """In a process forked from the zygote (kgym.verify.candidate.zygote), once its environment has been
    replaced by the spare's and its cwd is its own: give it what a cold `python -m kgym.verify.candidate.child`
    would have of its own.
    - Random generators: forked siblings would otherwise draw the same numbers. Python's `random`,
      numpy's global generator (where numpy is loaded) and torch's (CPU, and CUDA's queued seed) are
      reseeded from os.urandom. The candidate's parameters are drawn after `load` seeds torch with
      the public seed, as before.
    - Paths the zygote's imports derived from its own dir (`zygote_dir`: its cwd, HOME and TMPDIR):
      tempfile's cached temp dir, the reference module's source dir (made at import), Triton's home
      dir default, site's user dirs, multiprocessing's ORIGINAL_DIR, torch's config defaults
      (dynamo's debug dir) and dynamo's disk cache prefix, any module-level string under that dir
      (found once in the zygote: `find_zygote_paths`).
    - CPU threads: torch's intra-op count where the spare's environment sets one (OpenMP read the
      zygote's at load); numpy's OpenBLAS pool, which OpenBLAS shuts down before a fork, is started
      again as numpy's import starts it in a cold process (the Triton interpreter runs numpy's matmul,
      and the thread count is read at load: a pool starting later would read as a candidate's thread).
    """
    import random
    import site
    import tempfile

    oom_first()  # before the confinement, which leaves /proc unwritable
    cap_files()
    confine_process()  # first, while this process has one thread: every later one inherits it
    random.seed(os.urandom(32))
    np = sys.modules.get("numpy")
    if np is not None and "numpy.random" in sys.modules:
        np.random.seed(int.from_bytes(os.urandom(4), "little"))
    torch.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
    tempfile.tempdir = None
    site.USER_BASE = site.USER_SITE = None
    if zygote_dir:
        _rebase_paths(os.path.realpath(zygote_dir), os.getcwd())
    reference = sys.modules.get("kgym.verify.parent.reference")
    if reference is not None:
        reference.SOURCE_DIR = tempfile.mkdtemp(prefix="kgym-ref-")
    knobs = sys.modules.get("triton.knobs")
    home = getattr(type(getattr(knobs, "cache", None)), "__dict__", {}).get("home_dir")
    if home is not None and hasattr(home, "default"):
        home.default = os.path.expanduser("~/")
    if threads:
        torch.set_num_threads(int(threads))
    if np is not None:
        a = np.ones((256, 256))
        (a @ a).sum()
        del a


_zygote_paths: list[tuple[Any, str, str]] = []  # (owner, kind, name): found by find_zygote_paths


def find_zygote_paths(old: str) -> int:
    """In the zygote, after its imports: remember every string they left under its own dir `old`
    (module globals, torch's config entries, dynamo's disk cache prefix), so that a forked process
    rebases exactly those (`after_fork`) instead of walking every module, which would take 0.2-0.3 s
    and copy the shared pages it touches. Returns how many were found."""
    from torch.utils._config_module import ConfigModule

    def under(v: Any) -> bool:
        if isinstance(v, PurePath):  # dill.session.TEMPDIR
            v = str(v)
        return type(v) is str and (v == old or v.startswith(old + "/"))

    found: list[tuple[Any, str, str]] = []
    for mod in list(sys.modules.values()):
        if isinstance(mod, ConfigModule):
            for entry in list(getattr(mod, "_config", {}).values()):
                found += [(entry, "attr", a) for a in ("default", "env_value_default", "env_value_force")
                          if under(getattr(entry, a, None))]
            continue
        d = getattr(mod, "__dict__", None)
        if type(d) is dict:
            found += [(d, "item", k) for k, v in list(d.items()) if under(v)]
    cache = getattr(sys.modules.get("torch._dynamo.package"), "DynamoCache", None)
    if under(getattr(cache, "_path_prefix", None)):
        found.append((cache, "attr", "_path_prefix"))
    _zygote_paths[:] = found
    return len(found)


def _rebase_paths(old: str, new: str) -> None:
    """Point the strings `find_zygote_paths` found under `old` at `new`."""
    for owner, kind, name in _zygote_paths:
        v = owner[name] if kind == "item" else getattr(owner, name, None)
        path_type = type(v) if isinstance(v, PurePath) else None
        if path_type is not None:
            v = str(v)
        if type(v) is str and (v == old or v.startswith(old + "/")):
            v = new + v[len(old):]
            if path_type is not None:
                v = path_type(v)
            if kind == "item":
                owner[name] = v
            else:
                setattr(owner, name, v)
    _zygote_paths.clear()


_confined = {"abi": 0, "no_processes": False}  # the Landlock ABI this process is confined with
# (confine.py), 0: none; whether it may start no process (seccomp, the CPU, from load on)


def _device_files() -> list[str]:
    return ["/dev/null", *gpu_device_files()]


def oom_first() -> None:
    """Make this process the kernel's first choice when the host runs out of memory (oom_score_adj
    1000, before any candidate exists). The candidate may use its whole memory limit, and on a host
    short of memory (several GPUs' candidates, a colocated RL job) the OOM killer picked by size: the
    trusted parent (the farm's worker), a spare or the learner could go instead of the candidate, a
    farm failure or a lost RL step where the candidate's own crash was due. Raising the value needs no
    privilege; lowering it again does (and, confined, /proc is not writable). Best effort: a /proc
    that refuses it leaves the process as it was."""
    try:
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
        try:
            os.write(fd, b"1000")
        finally:
            os.close(fd)
    except OSError:
        pass


# The most any one file the candidate's process writes may hold (RLIMIT_FSIZE). Its stdout and stderr are files
# in its private dir on the host's disk: `print` in forward (policy on) wrote 27 GB there in 68 s, and every
# other verification on the host (its compiles, the parent's caches and records) shares that disk. Past the
# limit a write raises SIGXFSZ (the process dies: a crash) or EFBIG. Honest processes write far less: Triton's
# cache entries and CUDA's JIT cache entries are megabytes.
FILE_SIZE_LIMIT = 1 << 28


def cap_files() -> None:
    """RLIMIT_FSIZE of this process to FILE_SIZE_LIMIT (soft and hard: the candidate cannot raise it), before any
    candidate code exists. Lent buffers are the parent's files, mapped at their size: never grown here."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    cap = FILE_SIZE_LIMIT if hard == resource.RLIM_INFINITY else min(hard, FILE_SIZE_LIMIT)
    resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))


def confine_process() -> None:
    """The first layer of confine.py's rule, when the process starts (before any candidate exists):
    files may be written only beneath its private dir (the cwd) and /dev/shm (lent buffers). Not on CUDA
    yet (confine.CONFINE_CUDA)."""
    if applies(torch.device(os.environ.get("KGYM_DEVICE", "cpu")).type):
        _confined["abi"] = confine([os.getcwd(), "/dev/shm"], _device_files())


def start(sock: socket.socket) -> None:
    """The child's normal start and command loop, then exit (never returns)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    Child(sock).serve()
    sock.close()
    sys.stdout.flush()
    os._exit(0)


def main() -> None:
    oom_first()
    cap_files()
    confine_process()
    start(socket.socket(fileno=int(os.environ["KGYM_CHILD_FD"])))


if __name__ == "__main__":
    main()
