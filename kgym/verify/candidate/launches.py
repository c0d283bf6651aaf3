"""Gate 2's launch count, in the candidate's process: which Triton kernels a forward launched.

The hook wraps `run` on Triton's JITFunction (compiled) and InterpretedFunction (TRITON_INTERPRET=1)
classes before the candidate is loaded; `kernel[grid](...)` and autotuned kernels both end there.
A count of zero fails the launch gate. On a GPU the count is confirmed device-side by the profiler
(`device_kernel_names`): a launch that never reached the device does not count.

Launch arguments are read by exact type only (`accessors`): a tensor by its accessors bound before
the candidate existed, scalars of exact builtin types by value, Triton's own descriptor and dtype
objects field by field. Anything else (a subclass of int or str with its own __repr__ or __hash__,
a tensor subclass, an object of the candidate's) is refused before Triton sees it: describing it
would run candidate code, later, outside the guard.

The launch signature names each tensor argument by its role, not only by its shape: which input
(and at what offset), the output, a storage allocated in this forward (by order of appearance), or
a persistent storage (by address). A flag tensor that switches a kernel off in some runs is another
storage than the one the verified runs passed.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import sys
import types
from collections.abc import Iterable
from typing import Any

import torch

from kgym.verify import accessors
from kgym.verify.candidate.frontend import FrontendCheck

_getattribute = object.__getattribute__
_type_qualname = type.__dict__["__qualname__"].__get__
_callable = callable


class LaunchRefused(RuntimeError):
    """A launch argument kgym will not read (raised into the candidate, recorded as isolation)."""


def _tensor(x: torch.Tensor) -> tuple:
    start, end = accessors.storage_span(x)
    return ("T", tuple(accessors.shape(x)), tuple(accessors.stride(x)), str(accessors.dtype(x)),
            str(accessors.device(x)), accessors.data_ptr(x), start, end)


def describe(x: Any) -> Any:
    """An exact-type description of one launch argument, or LaunchRefused."""
    if accessors.is_plain_tensor(x):
        return _tensor(x)
    if accessors.is_scalar(x):
        return x
    t = type(x)
    if t is tuple or t is list:
        return tuple(describe(y) for y in x)
    if t is torch.dtype:
        return ("dtype", str(x))
    from triton.language import core as tl_core

    if t is tl_core.dtype:
        name = _getattribute(x, "name")
        if type(name) is str:
            return ("tl.dtype", name)
    if t is tl_core.constexpr:
        return ("constexpr", describe(_getattribute(x, "value")))
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor
    except ImportError:  # an older Triton
        TensorDescriptor = None
    if TensorDescriptor is not None and t is TensorDescriptor:
        fields = ("base", "shape", "strides", "block_shape", "padding")
        return ("desc",) + tuple(describe(_getattribute(x, f)) for f in fields)
    qualname = _type_qualname(t)  # read through `type`, not through a metaclass the candidate wrote
    raise LaunchRefused(f"a launch argument of type {qualname if type(qualname) is str else '?'} "
                        "(kgym reads plain tensors, exact int/float/bool/str/None, tuples and lists)")


def _ptrs(desc: Any) -> list[int]:
    """Storage base pointers of the tensors in a description."""
    if type(desc) is tuple and desc and desc[0] == "T":
        return [desc[6]]
    if type(desc) is tuple:
        return [p for d in desc for p in _ptrs(d)]
    return []


class LaunchCounter:
    def __init__(self) -> None:
        self.launches = 0
        self.kernels: list[str] = []
        self.calls: list[tuple] = []  # (kernel, grid, args, kwargs) per launch since the last reset
        self.installed: list[tuple[type, Any, Any]] = []  # (class, original run, our wrapper)
        self.refusals: list[str] = []
        self.provenance: Any = None  # a provenance.Provenance: storages passed to a launch
        self.report: Any = None  # report(gate, reason), the parent's append-only channel
        self.frontend_check = FrontendCheck(describe)
        self.rewriting = False  # True only while `pin_interpreted` has Triton rewrite a checked kernel
        # True only while Triton's interpreter runs a checked kernel (no pre-run hooks, no candidate
        # Python but the kernel the front end checked): its torch calls are the interpreter's
        self.interpreting = False
        # True while the candidate is imported and ModelNew built (child.load): no launch then, since
        # construction is neither timed nor checked (a table of the operation, a weight folded ahead)
        self.constructing = False
        self._interpreter: tuple | None = None  # (InterpretedFunction, FunctionRewriter, its members), at install
        self._triton_dir = ""  # Triton's package directory, at install
        self.window: Any = None  # an outside.CallWindow: launches only inside the harness's calls
        self.names: set[str] = set()  # every Triton kernel name launched since load (device counts)

    def _refuse(self, why: str) -> None:
        self.refusals.append(why)
        if self.report is not None:
            self.report("isolation", f"launch refused: {why}")
        raise LaunchRefused(f"kgym: {why}")

    def install(self) -> None:
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction

        counter = self
        for cls in (JITFunction, InterpretedFunction):
            original = cls.run
            interpreted = cls is InterpretedFunction

            def run(self, *args, _original=original, _interpreted=interpreted, **kwargs):
                # Read once, by exact type: Triton asks `if warmup:` again, and an object of the
                # candidate's answered True here and False there (an unrecorded, unchecked launch).
                warmup = kwargs.get("warmup", False)
                if type(warmup) is not bool:
                    counter._refuse(f"a launch whose warmup argument is a {_type_qualname(type(warmup))!s:.60}, "
                                    "not a bool")
                if counter.constructing and not warmup:  # a warm-up only compiles
                    counter._refuse("a Triton kernel launched while the candidate was imported or built "
                                    "(construction is neither timed nor checked: launch kernels in forward())")
                if not warmup:
                    counter.record(self, args, kwargs)
                    if _interpreted:  # the CPU: the interpreter runs any Python a GPU build would reject
                        counter.frontend(self, args, kwargs)
                        counter.pin_interpreted(self)
                        # its own torch calls (each tensor argument laid over a host storage with set_,
                        # copied back after) are not the candidate's Python data (python_data.py)
                        counter.interpreting = True
                        try:
                            return _original(self, *args, **kwargs)
                        finally:
                            counter.interpreting = False
                return _original(self, *args, **kwargs)

            cls.run = run
            self.installed.append((cls, original, run))
        if os.environ.get("TRITON_INTERPRET") == "1":
            interpreter_autotune()
            from kgym.verify.candidate import bounds

            bounds.install()  # loads and stores inside the launch's storages (bounds.py)
        from triton.runtime.interpreter import FunctionRewriter

        self._triton_dir = os.path.dirname(os.path.realpath(sys.modules["triton"].__file__)) + os.sep
        self._interpreter = (InterpretedFunction, FunctionRewriter, dict(InterpretedFunction.__dict__),
                             dict(FunctionRewriter.__dict__))

    def pin_interpreted(self, kernel: Any) -> None:
        """On the CPU, what the interpreter runs is rewritten at this launch from the source the front
        end just checked, by a rewriter kgym makes, for the kernel and every jitted helper in its
        globals. The interpreter otherwise runs whatever its one shared cache
        (`InterpretedFunction.rewritten_fn`) holds for the kernel's function, built by the kernel's own
        `rewriter`, whose file name decides whether the import guard sees the code as the candidate's:
        a candidate that stored a host function in the cache, or handed the rewriter a string of code
        under another file name, ran Python and numpy in place of the checked kernel (our red team,
        2026-12-04). Only while this runs does the audit let Triton's interpreter exec code
        (`AuditTripwire`), and only code of the candidate's file."""
        interpreted, rewriter_cls, members, rewriter_members = self._interpreter
        if any(interpreted.__dict__.get(k) is not v for k, v in members.items() if k != "run") or \
                any(rewriter_cls.__dict__.get(k) is not v for k, v in rewriter_members.items()):
            self._refuse("Triton's interpreter classes were changed")
        from kgym.verify.candidate import bounds

        if not bounds.intact():
            self._refuse("Triton's interpreter's memory operations were changed (bounds.py)")
        python_fn = _getattribute(kernel, "fn")
        kernels = [kernel] + [v for v in list(_getattribute(python_fn, "__globals__").values())
                              if type(v) is interpreted and v is not kernel]
        cache = members["rewritten_fn"]
        # Triton's own jitted functions (tl.max, tl.sigmoid, ... in triton.language.standard) are
        # rewritten by the interpreter on first call: done here, fresh, from Triton's files only.
        for name, module in list(sys.modules.items()):
            if not name.startswith("triton.") or type(module) is not types.ModuleType:
                continue
            for v in list(module.__dict__.values()):
                if type(v) is not interpreted:
                    continue
                fn = _getattribute(v, "__dict__").get("fn")
                if type(fn) is not types.FunctionType or not fn.__code__.co_filename.startswith(self._triton_dir):
                    self._refuse("a Triton library kernel whose function was replaced")
                if fn not in cache:
                    self._rewrite(cache, rewriter_cls, fn)
        for k in kernels:
            if type(k) is not interpreted:
                self._refuse("a kernel object of a class other than Triton's InterpretedFunction")
            state = _getattribute(k, "__dict__")
            if set(state) - {"arg_names", "fn", "kwargs", "pre_run_hooks", "rewriter"}:
                self._refuse("a kernel object with attributes of its own (they would shadow the interpreter's)")
            if state.get("pre_run_hooks"):
                self._refuse("a kernel with pre-run hooks (host Python the interpreter runs at the launch)")
            fn = state["fn"]
            if type(fn) is not types.FunctionType:
                self._refuse("a kernel whose function is not a plain Python function")
            # The interpreter's rewriter starts the kernel's source at the LAST line that begins
            # with `def `; Triton's compiler and the front-end check at the first. A second such
            # line (inside a docstring) made the interpreter run a hidden host function while the
            # front end checked a copy kernel (our red team, 2026-12-04).
            lines, _ = inspect.getsourcelines(fn)
            if sum(1 for line in lines if line.strip().startswith("def ")) != 1:
                self._refuse("a kernel whose source has more than one line starting with 'def ' (the "
                             "interpreter would run from the last one, the compiler from the first)")
            state["arg_names"] = [p.name for p in inspect.signature(fn).parameters.values()]
            state["rewriter"] = self._rewrite(cache, rewriter_cls, fn)

    def _rewrite(self, cache: dict, rewriter_cls: type, fn: types.FunctionType) -> Any:
        fresh = rewriter_cls(fn)
        cache.pop(fn, None)
        self.rewriting = True
        try:
            cache[fn] = fresh.rewrite_ast()
        finally:
            self.rewriting = False
        return fresh

    def record(self, fn: Any, args: tuple, kwargs: dict) -> None:
        name = _kernel_name(fn)
        if name is None:
            self._refuse("a kernel whose name is not a plain str")
        if self.window is not None and not self.window.inside:
            # Whoever asked (a finalizer, a gc callback, Triton's own launcher handed to one): work
            # launched between the harness's calls is neither counted nor timed.
            self._refuse(f"kernel {name} launched outside the harness's calls (kernels may be launched "
                         "only from forward)")
        self.names.add(name)
        grid = kwargs.get("grid")
        try:
            described = (name, "callable" if _callable(grid) else describe(grid), describe(args),
                         tuple(sorted((_plain_key(k), describe(v)) for k, v in kwargs.items()
                                      if k not in ("grid", "warmup"))))
        except LaunchRefused as e:
            self._refuse(str(e))
        self.launches += 1
        self.kernels.append(name)
        self.calls.append(described)
        if self.provenance is not None:
            self.provenance.launched(_ptrs(described[2]) + _ptrs(described[3]))

    def frontend(self, fn: Any, args: tuple, kwargs: dict) -> None:
        """An interpreted launch (the CPU): the kernel must lower to Triton IR for a GPU (frontend.py).
        Recorded at once as a `compile` failure: catching the error takes nothing back."""
        try:
            self.frontend_check.check(fn, args, kwargs)
        except BaseException as e:  # noqa: BLE001 - whatever the front end raised is the verdict
            name = _kernel_name(fn) or "?"
            text = str(e).strip().replace("\n", " ")
            why = (f"kernel {name} does not compile for a GPU (Triton's front end rejects it; the CPU "
                   f"interpreter would have run it as Python): {text[-700:]}")
            if self.report is not None:
                self.report("compile", why)
            raise

    def intact(self) -> bool:
        """Is every hook still in place (the candidate did not swap `run` back or out)?"""
        return all(cls.__dict__.get("run") is wrapper for cls, _, wrapper in self.installed)

    def reset(self) -> None:
        self.launches = 0
        self.kernels = []
        self.calls = []

    def signature(self, inputs: list[Any] = (), out: Any = None, fresh: Iterable[int] = ()) -> str:
        """A digest of the launches since the last reset: kernels, grids, scalars, and each tensor
        argument by shape, strides, dtype and role (`_role`). Timed runs must launch what the
        verified runs launched."""
        spans = [accessors.storage_span(x) for x in inputs if accessors.is_plain_tensor(x)]
        out_span = accessors.storage_span(out) if accessors.is_plain_tensor(out) else None
        fresh_set = set(fresh)
        order: dict[int, int] = {}

        def role(desc: Any) -> Any:
            if type(desc) is tuple and desc and desc[0] == "T":
                _, shape, stride, dtype, dev, ptr, start, _end = desc
                for k, (s, e) in enumerate(spans):
                    if s <= ptr < e or (s == e == ptr):
                        return ("T", shape, stride, dtype, dev, "in", k, ptr - s)
                if out_span is not None and out_span[0] <= ptr < out_span[1]:
                    return ("T", shape, stride, dtype, dev, "out", ptr - out_span[0])
                if start in fresh_set:
                    n = order.setdefault(start, len(order))
                    return ("T", shape, stride, dtype, dev, "new", n, ptr - start)
                return ("T", shape, stride, dtype, dev, "old", start, ptr - start)
            if type(desc) is tuple:
                return tuple(role(d) for d in desc)
            return desc

        calls = [role(c) for c in self.calls]
        return hashlib.sha256(repr(calls).encode()).hexdigest()[:16]


def _bench_once(kernel_call: Any, quantiles: Any = None) -> list[float]:
    """The interpreter's autotune benchmark: each config's call runs once (as a GPU's benchmark runs it, so an
    in-place kernel without `restore_value` is as wrong here as there) and every config ties, so the first
    one is chosen. The interpreter's speed says nothing of a GPU's, so nothing is timed."""
    kernel_call()
    return [0.0] * (len(quantiles) if quantiles else 1)


def interpreter_autotune() -> None:
    """CPU only (TRITON_INTERPRET=1): Triton's autotuner benchmarks its configs through the active driver's
    benchmarker, and the interpreter has no driver ("0 active drivers"): every honest kernel with an
    autotune decorator of more than one config crashed on its first launch (the honest sweep's second round,
    2026-12-07, `52_`, `65_`). Installed with the launch hooks, before any candidate code."""
    from triton.runtime.autotuner import Autotuner

    Autotuner.do_bench = property(lambda self: _bench_once)


def tensor_storages(calls: Iterable[Any]) -> list[int]:
    """The storage start of every tensor argument in the launch records `calls` (`LaunchCounter.calls`)."""
    return [p for c in calls for p in _ptrs(c)]


def _plain_key(k: Any) -> str:
    if type(k) is not str:
        raise LaunchRefused("a keyword argument whose name is not a plain str")
    return k


def _kernel_name(fn: Any) -> str | None:
    """The Python name of a Triton kernel, read from the function Triton wraps; None (refused) unless
    it and any name the wrapper holds of its own are exactly str."""
    try:
        name = _getattribute(_getattribute(fn, "fn"), "__name__")
    except AttributeError:
        return None
    own = _instance_dict(fn).get("__name__", name) if _has_dict(fn) else name
    if type(name) is not str or type(own) is not str:
        return None
    return name


def _has_dict(obj: Any) -> bool:
    try:
        _instance_dict(obj)
        return True
    except (AttributeError, TypeError):
        return False


def _instance_dict(obj: Any) -> dict:
    d = _getattribute(obj, "__dict__")
    if type(d) is not dict:
        raise TypeError("no plain __dict__")
    return d


# Device kernels that only move or fill memory, or that the timing protocol itself queues (the L2
# flush's fill, the hold's spin): allowed on top of the verified runs' kernels. torch's join (cat and
# stack) and flip kernels are copies too: the guard's provenance rule judges what they copy, on every
# device alike (a join is Triton work only where every part is); without them here the GPU refused an
# honest join of Triton results that the CPU passed (H100, 2026-12-07: tests/exploits/test_copy_glue.py).
_HARNESS_KERNEL_MARKS = ("FillFunctor", "direct_copy_kernel", "copy_kernel", "Memcpy", "Memset",
                         "memcpy", "memset", "spin_kernel", "CatArrayBatchedCopy", "flip_kernel_impl")


def is_copy_or_fill_kernel(name: str) -> bool:
    return any(m in name for m in _HARNESS_KERNEL_MARKS)


def device_kernel_names(events: Iterable[Any]) -> list[str]:
    """Names of the kernels (and memcpy/memset activities) the profiler saw run on a CUDA device."""
    names = []
    for evt in events:
        if str(getattr(evt, "device_type", "")).endswith("CUDA"):
            names.append(evt.name)
    return names


def device_streams(events: Iterable[Any]) -> dict[str, list[str]]:
    """The streams the profiler saw device work run on, each with the names of the kernels, copies and
    fills it ran, in order of first use. A stream is named by CUPTI's stream id and, where the event
    tells it, its device (`7@cuda:1`): stream ids are numbered per device, and the default stream of
    every GPU of the process has the same one, so work on a second visible GPU, which no event of the
    timed device's stream waits for, read as the timed stream itself (red team, 2026-12-07)."""
    device_work = [e for e in events if str(getattr(e, "device_type", "")).endswith("CUDA")]
    # An event that names no device (kept as before) joins its stream id's one
    # known device: only a second device, not a missing field, makes a second stream.
    devices: dict[str, set[int]] = {}
    for evt in device_work:
        device = getattr(evt, "device_index", None)
        if isinstance(device, int) and device >= 0:
            devices.setdefault(str(getattr(evt, "device_resource_id", "?")), set()).add(device)
    streams: dict[str, list[str]] = {}
    for evt in device_work:
        stream = str(getattr(evt, "device_resource_id", "?"))
        device = getattr(evt, "device_index", None)
        if not (isinstance(device, int) and device >= 0) and len(devices.get(stream, ())) == 1:
            device = next(iter(devices[stream]))
        key = f"{stream}@cuda:{device}" if isinstance(device, int) and device >= 0 else stream
        names = streams.setdefault(key, [])
        if evt.name not in names:
            names.append(evt.name)
    return streams


def working_streams(events: Iterable[Any]) -> dict[str, list[str]]:
    """The streams of `device_streams` that ran anything but memsets.

    The harness queues its L2 flush, its hold and its events on the current stream and times that
    stream: work on any other stream runs beside the hold and the events, unseen by them, so a profiled
    span whose work uses more than one stream is refused, whatever the work is. A memset reads
    nothing and computes nothing, and cuDNN zeroes its workspace on a stream of its own (conv hybrids
    on an H200, 2026-12-03), so memsets may run anywhere."""
    return {k: v for k, v in device_streams(events).items() if not all(n.startswith("Memset") for n in v)}


def kernel_counts(names: Iterable[str], triton_names: Iterable[str] = ()) -> dict[str, int]:
    """How many times each device kernel ran, copy and fill kernels left out. A kernel named like one
    of the candidate's Triton kernels (`triton_names`, every name launched since load) is counted
    whatever its name: a Triton kernel called `my_copy_kernel` is not the harness's copy."""
    wanted = set(triton_names)
    counts: dict[str, int] = {}
    for n in names:
        if not is_copy_or_fill_kernel(n) or _is_triton_name(n, wanted):
            counts[n] = counts.get(n, 0) + 1
    return counts


def _is_triton_name(device_name: str, triton_names: set[str]) -> bool:
    """A Triton kernel's device name is an identifier (its name, maybe with a suffix); torch's kernels
    and CUDA's copies are named by signatures and phrases with spaces ("void at::native::...")."""
    if " " in device_name:
        return False
    return device_name in triton_names or any(device_name.startswith(k + "_") for k in triton_names)


def confirmed_on_device(kernel_names: Iterable[str], device_names: Iterable[str]) -> int:
    """How many device kernels carry the name of a Triton kernel the hook saw launched."""
    wanted = set(kernel_names)
    return sum(1 for d in device_names if any(d == k or d.startswith(k + "_") for k in wanted))
