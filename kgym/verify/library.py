"""The hybrid allowance and the cast rule: which library calls and which dtype conversions a
candidate's forward() may leave to PyTorch.

Hybrid tasks may make exactly one library call, and only of the kind the reference itself makes
(GEMM: mm/addmm/bmm/baddbmm; convolution) and no larger than the reference's largest call of that
kind, in FLOPs. The allowance is measured in the trusted parent by running the reference once under
`record_library_calls`; the child's guard enforces it (`LibraryAllowance.check`). Counting calls alone
let two GEMMs stacked into one bmm pass as "one call".

Casts: a dtype conversion counts as a copy only when it is value-preserving (every value of the
source type is exactly a value of the destination type: fp16 -> fp32, int8 -> fp32, bool -> any).
float -> int truncates, narrowing ints wrap, anything -> bool compares with zero: those compute.
Narrowing floats (fp32 -> fp16/bf16, fp64 -> fp32) round, which is computation too, and a round trip
(fp32 -> fp16 -> fp32) is a lossy answer dressed as a copy: refused. A kernel whose output is
narrower than its arithmetic stores the narrow type from Triton (`tl.store(p, y.to(tl.float16))`).
A bit-reinterpreting view (`x.view(torch.int32)` of floats) is refused for the same reason.
Does not decide anything else about ops (guard.py's ALLOWED_OPS does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

GEMM_OPS = frozenset({"mm", "addmm", "bmm", "baddbmm"})
CONV_OPS = frozenset({"convolution", "_convolution", "cudnn_convolution", "mkldnn_convolution",
                      "convolution_overrideable", "cudnn_convolution_transpose"})


def library_kind(op: str) -> str | None:
    """'gemm', 'conv' or None for an aten overload packet name."""
    if op in GEMM_OPS:
        return "gemm"
    if op in CONV_OPS:
        return "conv"
    return None


def library_flops(op: str, args: tuple, result: Any) -> int:
    """Multiply-adds x 2 of one library call, from its arguments and result (plain shapes only)."""
    if not isinstance(result, torch.Tensor):
        return 0
    if op in GEMM_OPS:
        a = args[1] if op in ("addmm", "baddbmm") else args[0]
        return 2 * result.numel() * int(a.shape[-1])
    if op in CONV_OPS:
        inp, weight = args[0], args[1]
        transposed = bool(args[6]) if op in ("convolution", "_convolution") and len(args) > 6 else (
            op == "cudnn_convolution_transpose")
        per = weight.numel() // max(1, int(weight.shape[0]))
        return 2 * (inp.numel() if transposed else result.numel()) * per
    return 0


@dataclass(frozen=True)
class LibraryAllowance:
    """What a hybrid candidate may call: kinds, and the largest call of each kind (FLOPs)."""

    max_flops: dict[str, int]

    def to_wire(self) -> dict[str, Any]:
        return {"max_flops": dict(self.max_flops)}

    @classmethod
    def from_wire(cls, d: Any) -> LibraryAllowance | None:
        """The child's side; False/None (not hybrid) -> None. A bare True (an older parent) allows the
        kinds with no size bound."""
        if d is True:
            return cls({"gemm": 1 << 62, "conv": 1 << 62})
        if not d:
            return None
        return cls({str(k): int(v) for k, v in d["max_flops"].items()})

    def check(self, op: str, args: tuple, result: Any) -> str | None:
        """Why this call is not allowed, or None."""
        kind = library_kind(op)
        if kind not in self.max_flops:
            allowed = ", ".join(sorted(self.max_flops)) or "none"
            return f"aten::{op} is a {kind or 'library'} call; the reference makes {allowed} calls only"
        flops = library_flops(op, args, result)
        if flops > self.max_flops[kind]:
            return (f"aten::{op} computes {flops:.3g} FLOPs, more than the reference's largest {kind} call "
                    f"({self.max_flops[kind]:.3g}): one library call may replace one of the reference's, "
                    "not several stacked together")
        return None


def as_allowance(hybrid: Any) -> LibraryAllowance | None:
    """The guard's view of its `hybrid` setting: an allowance, its wire form (a dict), True (kinds
    with no size bound) or False/None (not hybrid)."""
    if isinstance(hybrid, LibraryAllowance):
        return hybrid
    return LibraryAllowance.from_wire(hybrid)


class _Recorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, int]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.name().split("::", 1)[-1].split(".", 1)[0]
        kind = library_kind(name)
        if kind is not None:
            self.calls.append((kind, library_flops(name, args, out)))
        return out


def record_library_calls(model: torch.nn.Module, inputs: list[Any]) -> LibraryAllowance:
    """Run the (trusted) reference once and note its library calls: the hybrid allowance."""
    rec = _Recorder()
    with torch.no_grad(), rec:
        model(*inputs)
    largest: dict[str, int] = {}
    for kind, flops in rec.calls:
        largest[kind] = max(largest.get(kind, 0), flops)
    return LibraryAllowance(largest)


# --- casts ------------------------------------------------------------------------------------
def value_preserving(src: torch.dtype, dst: torch.dtype) -> bool:
    """Is every value of `src` exactly a value of `dst`?"""
    if src == dst or src == torch.bool:
        return True
    if dst == torch.bool:
        return False
    if src.is_complex:
        return dst.is_complex and value_preserving(_real(src), _real(dst))
    if dst.is_complex:
        return value_preserving(src, _real(dst))
    if src.is_floating_point:
        if not dst.is_floating_point:
            return False  # truncation
        s, d = torch.finfo(src), torch.finfo(dst)
        return d.eps <= s.eps and d.max >= s.max and d.smallest_normal <= s.smallest_normal
    try:
        s = torch.iinfo(src)
    except TypeError:
        return False  # quantized and other exotic types
    if dst.is_floating_point:
        # every integer up to 2^(mantissa bits + 1) is exact
        mantissa = {torch.float16: 11, torch.bfloat16: 8, torch.float32: 24, torch.float64: 53}.get(dst)
        return mantissa is not None and max(abs(s.min), s.max) <= 2 ** mantissa
    try:
        d = torch.iinfo(dst)
    except TypeError:
        return False
    return d.min <= s.min and d.max >= s.max


def _real(dtype: torch.dtype) -> torch.dtype:
    return {torch.complex32: torch.float16, torch.complex64: torch.float32,
            torch.complex128: torch.float64}.get(dtype, dtype)


def _dtype(x: Any) -> torch.dtype | None:
    return x.dtype if type(x) is torch.Tensor else None  # noqa: E721 - exact type: no subclass hooks


def cast_problem(op: str, args: tuple, kwargs: dict, result: Any) -> str | None:
    """Why an allowed copy or view op is not a copy (a value-changing cast), or None."""
    src = dst = None
    if op in ("_to_copy", "to", "clone", "contiguous", "lift_fresh_copy"):
        src, dst = _dtype(args[0]) if args else None, _dtype(result)
    elif op in ("copy_", "copy"):
        src, dst = (_dtype(args[1]), _dtype(args[0])) if len(args) > 1 else (None, None)
    elif op == "fill_" and len(args) > 1 and type(args[1]) is torch.Tensor:  # noqa: E721
        src, dst = _dtype(args[1]), _dtype(args[0])  # a fill from a tensor casts its one value
    elif op in ("_copy_from", "_copy_from_and_resize"):
        src, dst = (_dtype(args[0]), _dtype(args[1])) if len(args) > 1 else (None, None)
    elif op == "view" and len(args) > 1 and isinstance(args[1], torch.dtype):
        src, dst = _dtype(args[0]), args[1]
        if src is not None and src != dst:
            return f"aten::view to {dst} reinterprets the bits of a {src} tensor (a bit cast computes)"
        return None
    if src is None or dst is None or value_preserving(src, dst):
        return None
    return (f"aten::{op} casts {src} to {dst}, which changes values (only value-preserving casts are copies: "
            "convert inside the Triton kernel)")
