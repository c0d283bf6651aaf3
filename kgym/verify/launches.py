"""Gate 2's launch count, in the candidate's process: which Triton kernels a forward launched.

The hook wraps `run` on Triton's JITFunction (compiled) and InterpretedFunction (TRITON_INTERPRET=1)
classes before the candidate is loaded; `kernel[grid](...)` and autotuned kernels both end there.
A count of zero fails the launch gate. On a GPU the count is confirmed device-side by the profiler
(`device_kernel_names`): a launch that never reached the device does not count.
"""

from __future__ import annotations

from typing import Any, Iterable


def _describe(x: Any) -> Any:
    """What a launch argument says about the work: tensors by shape/dtype/device, scalars by value."""
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ("T", tuple(x.shape), str(x.dtype), str(getattr(x, "device", "")))
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, (tuple, list)):
        return tuple(_describe(y) for y in x)
    return type(x).__name__


class LaunchCounter:
    def __init__(self) -> None:
        self.launches = 0
        self.kernels: list[str] = []
        self.calls: list[tuple] = []  # (kernel, grid, args) per launch since the last reset
        self.installed: list[tuple[type, Any, Any]] = []  # (class, original run, our wrapper)

    def install(self) -> None:
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction

        for cls in (JITFunction, InterpretedFunction):
            original = cls.run
            counter = self

            def run(self, *args, _original=original, **kwargs):
                if not kwargs.get("warmup", False):
                    name = getattr(self, "__name__", None) or self.fn.__name__
                    grid = kwargs.get("grid")
                    counter.launches += 1
                    counter.kernels.append(name)
                    counter.calls.append((name, "callable" if callable(grid) else _describe(grid),
                                          _describe(args),
                                          tuple(sorted((k, _describe(v)) for k, v in kwargs.items()
                                                       if k not in ("grid", "warmup")))))
                return _original(self, *args, **kwargs)

            cls.run = run
            self.installed.append((cls, original, run))

    def intact(self) -> bool:
        """Is every hook still in place (the candidate did not swap `run` back or out)?"""
        return all(cls.__dict__.get("run") is wrapper for cls, _, wrapper in self.installed)

    def reset(self) -> None:
        self.launches = 0
        self.kernels = []
        self.calls = []

    def signature(self) -> str:
        """A digest of the launches since the last reset: kernels, grids, argument shapes and scalars.
        Timed runs must launch what the verified runs launched."""
        import hashlib

        return hashlib.sha256(repr(self.calls).encode()).hexdigest()[:16]


def device_kernel_names(events: Iterable[Any]) -> list[str]:
    """Names of the kernels the profiler saw run on a CUDA device."""
    names = []
    for evt in events:
        if str(getattr(evt, "device_type", "")).endswith("CUDA"):
            names.append(evt.name)
    return names


def confirmed_on_device(kernel_names: Iterable[str], device_names: Iterable[str]) -> int:
    """How many device kernels carry the name of a Triton kernel the hook saw launched."""
    wanted = set(kernel_names)
    return sum(1 for d in device_names if any(d == k or d.startswith(k + "_") for k in wanted))
