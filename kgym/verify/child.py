"""The candidate's process: loads one candidate, runs the forwards and timings the parent asks for.

Started by `kgym.verify.sandbox` as `python -m kgym.verify.child` in a private temp dir with a
scrubbed environment and a socket as its only inherited descriptor. It warms up (torch, Triton's
compiler, the device, the profiler), says `ready`, then serves commands:
  load     write the candidate to candidate.py, arm the tripwires, import it, build ModelNew
  forward  run one forward on buffers the parent lent, under the guard (and the profiler), copy the
           output into the parent's output buffer, report launches and violations
  time     time forwards under gate 5's protocol, the guard switched on for a secret subset of runs
  exit
Everything this process reports is treated by the parent as a claim of a possibly hostile process:
only rejections and measured values are read from it; correctness is decided in the parent.
"""

from __future__ import annotations

import importlib.util
import os
import resource
import socket
import sys
import threading
import time
import traceback
from typing import Any

import torch

from kgym.verify import timing
from kgym.verify.audit import AuditTripwire
from kgym.verify.guard import ComputeGuard, forbidden_profiled_ops
from kgym.verify.launches import LaunchCounter, device_kernel_names
from kgym.verify.precision import exact_fp32
from kgym.verify.shared import open_handle
from kgym.verify.wire import recv_command, send_reply

MAX_TEXT = 4000
_write = os.write


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
    from kgym.verify.guard import IsolationViolation

    if isinstance(exc, IsolationViolation):
        return "isolation"
    if isinstance(exc, PermissionError) and "kgym sandbox" in str(exc):
        return "policy"
    tb = exc.__traceback__
    module = type(exc).__module__ or ""
    if module.startswith("triton"):
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


class Child:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.device = torch.device(os.environ.get("KGYM_DEVICE", "cpu"))
        exact_fp32()
        self.workdir = os.getcwd()
        self.model: torch.nn.Module | None = None
        self.hybrid = False
        self.counter = LaunchCounter()
        self.audit: AuditTripwire | None = None
        self.guard: ComputeGuard | None = None
        self.snapshot: dict[str, Any] = {}
        self.threads_at_load = 0
        self.report = _make_report()
        self.reported: set[str] = set()

    # --- start-up -------------------------------------------------------------------------
    def warm_up(self) -> float:
        """The device part of start-up (CUDA context, Triton's first compile and launch, the
        profiler). It waits for the parent's `warm` so that it never overlaps a timed run."""
        t0 = time.perf_counter()
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
        sys.path.insert(0, os.path.dirname(__file__))
        import warmup_kernel  # noqa: E402 - a file of our own, so Triton can read its source

        x = torch.zeros(1000, device=self.device)
        warmup_kernel.add_one_kernel[(1,)](x, 1000, BLOCK=1024)
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        with torch.profiler.profile(activities=self._activities()):
            warmup_kernel.add_one_kernel[(1,)](x, 1000, BLOCK=1024)
        sys.path.remove(os.path.dirname(__file__))
        return time.perf_counter() - t0

    def _activities(self) -> list:
        acts = [torch.profiler.ProfilerActivity.CPU]
        if self.device.type == "cuda":
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        return acts

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
        if not self.counter.intact():
            found.append("Triton's launch hook was removed")
        if self.audit is not None and not self.audit.intact():
            found.append("the import guard or a tensor tripwire was removed")
        if threading.active_count() > self.threads_at_load:
            found.append("the candidate started a thread")
        for f in found:
            if f not in self.reported:
                self.reported.add(f)
                self.report("isolation", f"tampering: {f}")
        return found

    # --- commands ---------------------------------------------------------------------------
    def load(self, msg: dict[str, Any]) -> dict[str, Any]:
        path = os.path.join(self.workdir, "candidate.py")
        with open(path, "w") as f:
            f.write(msg["source"])
        self.hybrid = bool(msg.get("hybrid", False))
        try:
            self._limit_memory(int(msg.get("memory_limit_bytes", 0)))
            self.counter.install()
            self._take_snapshot()
            self.threads_at_load = threading.active_count()
            self.audit = AuditTripwire(path, self.workdir, self.report)
            self.audit.install()
            self.guard = ComputeGuard(self.hybrid, self.device.type, self.report)
        except Exception:  # noqa: BLE001 - no candidate code has run yet: a failure of kgym
            return {"op": "internal", "phase": "before_candidate", "reason": _tail(traceback.format_exc())}
        try:
            spec = importlib.util.spec_from_file_location("candidate", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules["candidate"] = module
            spec.loader.exec_module(module)
            model_cls = getattr(module, "ModelNew", None)
            if model_cls is None:
                return {"op": "error", "gate": "compile", "reason": "the candidate defines no ModelNew"}
            torch.manual_seed(int(msg["seed"]))
            model = model_cls(*msg["init_inputs"])
            if not isinstance(model, torch.nn.Module):
                return {"op": "error", "gate": "compile", "reason": "ModelNew is not a torch.nn.Module"}
            self.model = model.to(self.device)
        except BaseException as e:  # noqa: BLE001 - anything the candidate raises is a verdict
            return self._error_reply(e, default_gate="compile")
        problems = self._violations()
        if problems:
            return {"op": "error", **problems}
        return {"op": "loaded"}

    def _violations(self) -> dict[str, Any] | None:
        """The tripwires' verdict so far: None, or the gate and reason to fail."""
        if self.audit is not None and self.audit.violations:
            return {"gate": "policy", "reason": "sandbox: " + "; ".join(self.audit.violations[:5])}
        if self.guard is not None and self.guard.violations:
            return {"gate": "isolation", "reason": "PyTorch computed in forward(): "
                    + ", ".join(dict.fromkeys(self.guard.violations))}
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
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return {"op": "error", "gate": kind, "reason": _tail(text)}

    def _call(self, inputs: list[Any], guarded: bool) -> Any:
        if not guarded:
            with torch.no_grad():
                return self.model(*inputs)
        self.guard.library_calls.clear()  # the one library call is allowed per forward
        with torch.no_grad(), self.guard:
            out = self.model(*inputs)
            if not self.guard.stack_intact():
                self.guard.record("the dispatch guard was removed from the mode stack")
        return out

    def _check_output(self, out: Any, inputs: list[Any], expect: torch.Tensor) -> tuple[dict, str | None]:
        """Type, device, aliasing, shape and dtype of what forward returned."""
        if type(out) is not torch.Tensor:  # noqa: E721 - subclasses (lazy tensors) are refused
            return {"type": type(out).__name__}, (f"forward() returned {type(out).__name__}, "
                                                  "not a plain torch.Tensor")
        meta = {"type": "Tensor", "shape": list(out.shape), "dtype": str(out.dtype).removeprefix("torch."),
                "device": str(out.device)}
        if out.device.type != self.device.type:
            return meta, f"output is on {out.device}, expected {self.device.type}"
        if out.is_sparse or out.layout != torch.strided:
            return meta, "output is not a dense strided tensor"
        out_ptr = out.untyped_storage().data_ptr()
        out_end = out_ptr + out.untyped_storage().nbytes()
        for x in inputs:
            if isinstance(x, torch.Tensor):
                s = x.untyped_storage()
                if out_ptr < s.data_ptr() + s.nbytes() and s.data_ptr() < out_end:
                    return meta, "output shares storage with an input (return a new tensor)"
        if tuple(out.shape) != tuple(expect.shape):
            return meta, f"output shape {tuple(out.shape)} != expected {tuple(expect.shape)}"
        if out.dtype != expect.dtype:
            return meta, f"output dtype {out.dtype} != expected {expect.dtype}"
        return meta, None

    def forward(self, msg: dict[str, Any]) -> dict[str, Any]:
        inputs = [open_handle(x) if _is_handle(x) else x for x in msg["inputs"]]
        expect = open_handle(msg["output"])
        self.counter.reset()
        reply: dict[str, Any] = {"op": "forward_done"}
        prof = None
        try:
            if msg.get("profile"):
                prof = torch.profiler.profile(activities=self._activities())
                with prof:
                    out = self._call(inputs, guarded=True)
                    if self.device.type == "cuda":
                        torch.cuda.synchronize(self.device)
            else:
                out = self._call(inputs, guarded=True)
        except BaseException as e:  # noqa: BLE001
            return self._error_reply(e, default_gate="crash")
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        reply["launches"] = self.counter.launches
        reply["kernels"] = sorted(set(self.counter.kernels))
        reply["signature"] = self.counter.signature()
        if prof is not None:
            events = prof.events()
            forbidden, library = forbidden_profiled_ops(events, self.hybrid)
            if self.device.type == "cuda":
                device_names = device_kernel_names(events)
                reply["device_kernels"] = sorted(set(device_names))
                forbidden += [n for n in dict.fromkeys(device_names) if "DtoH" in n or "HtoD" in n]
            for name in forbidden:
                self.guard.record(f"{name} (seen by the profiler)")
            reply["library_calls"] = library
        else:
            reply["library_calls"] = len(self.guard.library_calls)
        problems = self._violations()
        if problems:
            return {"op": "error", **problems}
        meta, problem = self._check_output(out, inputs, expect)
        reply["out"] = meta
        if problem is not None:
            reply["problem"] = problem
            gate = "isolation" if ("plain" in problem or "shares storage" in problem
                                   or "dense" in problem) else "correctness"
            reply["problem_gate"] = gate
        else:
            expect.copy_(out)
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
        nbytes = out.numel() * out.element_size() if isinstance(out, torch.Tensor) else 0
        del out
        _poison(self.device, nbytes)
        return reply

    def time(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Gate 5 in this process. The outputs of a few secret runs (`checks`) go to the parent's
        buffers between runs, untimed: a candidate that skips work on some runs is caught there."""
        inputs = [open_handle(x) if _is_handle(x) else x for x in msg["inputs"]]
        bases = [open_handle(x) if _is_handle(x) else x for x in msg["bases"]]
        checks = {int(k): open_handle(h) for k, h in msg["checks"].items()}
        scales: list[float] = msg["scales"]
        guarded_runs = set(msg["guarded_runs"])
        calib_times, calib_walls, _ = timing.run_timed(lambda: None, device=self.device, runs=20, warmup=2)
        state: dict[str, Any] = {"i": -1, "out": None, "problem": None}
        signatures: set[str] = set()

        def hand_over() -> None:
            """Untimed, after a run: its launch signature, and its output if the parent asked for it."""
            i, out = state["i"], state["out"]
            if i >= 0:
                signatures.add(self.counter.signature())
            if i in checks and state["problem"] is None:
                meta, problem = self._check_output(out, inputs, checks[i])
                if problem is None:
                    checks[i].copy_(out)
                else:
                    state["problem"] = f"run {i}: {problem}"

        def before_each(i: int) -> None:
            hand_over()
            state["i"] = i
            state["out"] = None
            self.counter.reset()
            timing.refresh(inputs, bases, scales[i] if i >= 0 else scales[0])

        def fn() -> None:  # timed: nothing but the call (host work after the launch would be timed too)
            state["out"] = self._call(inputs, guarded=state["i"] < 0 or state["i"] in guarded_runs)

        try:
            times, walls, clock = timing.run_timed(fn, device=self.device, runs=len(scales),
                                                   warmup=int(msg["warmup"]), before_each=before_each)
            hand_over()
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
        except BaseException as e:  # noqa: BLE001
            return self._error_reply(e, default_gate="crash")
        problems = self._violations()
        if problems:
            return {"op": "error", **problems}
        keep = [k for k in range(len(scales)) if k not in guarded_runs]
        return {"op": "timed", "times_ms": [times[k] for k in keep],
                "wall_ms": [walls[k] for k in keep], "clock": clock,
                "calib_times_ms": calib_times, "calib_wall_ms": calib_walls, "problem": state["problem"],
                "signatures": sorted(signatures)}

    def serve(self) -> None:
        # Imports are done (host-only work); the device is touched only once the parent says so.
        first = recv_command(self.sock)
        if first.get("op") != "warm":
            return
        send_reply(self.sock, {"op": "ready", "pid": os.getpid(), "warm_s": self.warm_up()})
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
    }


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


def _poison(device: torch.device, nbytes: int) -> None:
    """Fill the memory the last output held with NaN so a later torch.empty cannot find an answer."""
    if nbytes <= 0:
        return
    try:
        t = torch.empty(nbytes // 4 or 1, dtype=torch.float32, device=device)
        t.fill_(float("nan"))
        del t
    except RuntimeError:
        pass


def main() -> None:
    sock = socket.socket(fileno=int(os.environ["KGYM_CHILD_FD"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    Child(sock).serve()
    sock.close()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
