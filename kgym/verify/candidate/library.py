"""The hybrid allowance and the cast rule: which library calls and which dtype conversions a
candidate's forward() may leave to PyTorch.

Hybrid tasks may make exactly one library call, and it must be one of the reference's own calls
(the call rule, issue 29): the same op (GEMM: mm/addmm as `mm`, bmm/baddbmm as `bmm`; convolution),
the same operand shapes, the same alpha/beta and convolution settings, a bias only where the
reference's call has one (dropping it is allowed: the bias is then Triton's), and each operand what
the reference passes there: the same input, a parameter (for a bias: a parameter or zeros), or,
where the reference passes an intermediate result, any tensor. `out=` may not alias an operand.
So the call computes no more of the reference than the reference's own library op does: a scale
folded into alpha, a residual or a second bias carried as the call's bias, an operand augmented
with a column that adds a residual, a GEMM against diag(scale) are each refused. It is measured in
the trusted parent by running the reference once under `record_library_calls`, which notes each
call (`LibraryCall`) with its operands' roles by storage (inputs, parameters and buffers); the
child's guard compares the candidate's call (`LibraryAllowance.check`), its operands' roles read
from `provenance.Provenance.origin`. The kind-and-FLOPs bound of the first version stays as a
first check. A parameter torch wrote into, or that was ever handed to a Triton kernel, is no
longer a parameter here (provenance.py). Not covered: parameter values are not compared with the
reference's (a parameter built otherwise at construction keeps its role).

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

from kgym.verify import accessors

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


# Roles of a library call's operands, by storage: an input of forward (by position), a parameter or
# buffer of the module, zeros (a fresh allocation only zero-filled: a bias that adds nothing), or a
# tensor computed in forward (anything else).
# A parameter torch wrote into or a Triton kernel was handed is "written" (provenance.py): no longer
# the reference's parameter.
PARAM, ZERO, WRITTEN, COMPUTED = "param", "zero", "written", ""


def input_role(i: int) -> str:
    return f"input:{i}"


def _role_text(role: str) -> str:
    if role.startswith("input:"):
        return f"input {role.split(':', 1)[1]} of forward()"
    return {PARAM: "a parameter", ZERO: "zeros",
            WRITTEN: "a parameter that a Triton kernel was handed or torch wrote into (it may have been "
                     "rewritten; keep the library call's parameters out of your kernels)"
            }.get(role, "a tensor computed in forward()")


def _shape(t: Any) -> tuple[int, ...] | None:
    """A plain tensor's shape (read through the early-bound accessor), else None."""
    return tuple(int(d) for d in accessors.shape(t)) if accessors.is_plain_tensor(t) else None


def _ints(v: Any) -> tuple[int, ...]:
    return tuple(int(x) for x in v) if isinstance(v, (list, tuple)) else (int(v),)


def _number(v: Any) -> float:
    return float(v) if isinstance(v, (int, float, bool)) else float("nan")  # a tensor alpha: no match


@dataclass(frozen=True)
class LibraryCall:
    """One library call as the call rule compares it: op, operand shapes, settings and roles.

    op: "mm" (mm, addmm), "bmm" (bmm, baddbmm) or "conv" (convolution); shapes: (mat1, mat2) or
    (input, weight); bias: its shape with leading 1s dropped, or None; alpha and beta (1 for conv);
    conv: (stride, padding, dilation, transposed, output_padding, groups), () for GEMMs; roles: of
    (mat1, mat2, bias) or (input, weight, bias), "" for a missing bias."""

    op: str
    shapes: tuple[tuple[int, ...], ...]
    bias: tuple[int, ...] | None
    alpha: float
    beta: float
    conv: tuple
    roles: tuple[str, str, str]

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.op, "shapes": [list(x) for x in self.shapes],
                "bias": None if self.bias is None else list(self.bias), "alpha": self.alpha, "beta": self.beta,
                "conv": [list(x) if isinstance(x, tuple) else x for x in self.conv], "roles": list(self.roles)}

    @classmethod
    def from_wire(cls, d: dict[str, Any]) -> LibraryCall:
        return cls(str(d["op"]), tuple(tuple(int(v) for v in x) for x in d["shapes"]),
                   None if d["bias"] is None else tuple(int(v) for v in d["bias"]), float(d["alpha"]),
                   float(d["beta"]), tuple(tuple(x) if isinstance(x, list) else x for x in d["conv"]),
                   tuple(str(r) for r in d["roles"]))

    def text(self) -> str:
        what = " x ".join(str(x) for x in self.shapes)
        bias = f" + bias {self.bias}" if self.bias is not None else ""
        return f"{self.op} {what}{bias}"


def describe_call(op: str, args: tuple, kwargs: dict, role_of: Any) -> LibraryCall | str:
    """The call rule's view of one library call, or why it cannot be compared (an op the reference
    never makes at the top level, arguments that are not plain tensors)."""
    if op in ("mm", "bmm"):
        mats, bias, beta = args[:2], None, 1.0
    elif op in ("addmm", "baddbmm"):
        mats, bias, beta = args[1:3], args[0], _number(kwargs.get("beta", 1))
    elif op in ("convolution", "_convolution"):
        if len(args) < 9:
            return f"aten::{op} with {len(args)} arguments"
        mats, bias, beta = args[:2], args[2], 1.0
        conv = (_ints(args[3]), _ints(args[4]), _ints(args[5]), bool(args[6]), _ints(args[7]), int(args[8]))
    else:
        return f"aten::{op} is not a call the reference makes (call torch.mm/addmm/bmm/baddbmm or a convolution)"
    shapes = tuple(_shape(m) for m in mats)
    if len(shapes) != 2 or None in shapes:
        return f"aten::{op} on operands that are not plain tensors"
    bias_shape = None
    if bias is not None:
        full = _shape(bias)
        if full is None:
            return f"aten::{op} with a bias that is not a plain tensor"
        bias_shape = full
        while bias_shape and bias_shape[0] == 1:
            bias_shape = bias_shape[1:]
    kind = "conv" if op in ("convolution", "_convolution") else ("bmm" if op in ("bmm", "baddbmm") else "mm")
    roles = (role_of(mats[0]), role_of(mats[1]), "" if bias is None else role_of(bias))
    return LibraryCall(kind, shapes, bias_shape, _number(kwargs.get("alpha", 1)) if kind != "conv" else 1.0,
                       beta, conv if kind == "conv" else (), roles)


def _role_ok(theirs: str, ours: str, bias: bool) -> bool:
    """May the candidate pass an operand of role `ours` where the reference passes `theirs`?"""
    if theirs == COMPUTED:
        return True  # the reference passes an intermediate: the candidate computes it in Triton
    return ours == theirs or (bias and ours == ZERO)


def mismatch(cand: LibraryCall, ref: LibraryCall) -> str | None:
    """Why the candidate's call is not the reference's call `ref` (dropping the bias allowed)."""
    if cand.op != ref.op:
        return f"it is a{'n' if cand.op == 'mm' else ''} {cand.op} where the reference's call is a {ref.op}"
    if cand.shapes != ref.shapes:
        return (f"its operand shapes {' x '.join(map(str, cand.shapes))} are not the reference's "
                f"{' x '.join(map(str, ref.shapes))}")
    if cand.conv != ref.conv:
        return f"its convolution settings {cand.conv} are not the reference's {ref.conv}"
    if cand.bias is not None and ref.bias is None:
        return "it has a bias where the reference's call has none (the add is the Triton kernel's)"
    if cand.bias is not None and cand.bias != ref.bias:
        return f"its bias has shape {cand.bias}, the reference's {ref.bias}"
    scal = f"alpha={cand.alpha:g}" + (f", beta={cand.beta:g}" if cand.bias is not None else "")
    if cand.alpha != ref.alpha or (cand.bias is not None and cand.beta != ref.beta):
        return f"it has {scal} where the reference's call has alpha={ref.alpha:g}, beta={ref.beta:g}"
    names = ("input", "weight", "bias") if cand.op == "conv" else ("first operand", "second operand", "bias")
    for name, theirs, ours, is_bias in zip(names, ref.roles, cand.roles, (False, False, True)):
        if name == "bias" and cand.bias is None:
            continue
        if not _role_ok(theirs, ours, is_bias):
            return f"its {name} is {_role_text(ours)} where the reference passes {_role_text(theirs)}"
    return None


@dataclass(frozen=True)
class LibraryAllowance:
    """What a hybrid candidate may call: kinds, the largest call of each kind (FLOPs), and the
    reference's calls themselves (None from an older parent: kinds and sizes only)."""

    max_flops: dict[str, int]
    calls: tuple[LibraryCall, ...] | None = None

    def to_wire(self) -> dict[str, Any]:
        d: dict[str, Any] = {"max_flops": dict(self.max_flops)}
        if self.calls is not None:
            d["calls"] = [c.to_wire() for c in self.calls]
        return d

    @classmethod
    def from_wire(cls, d: Any) -> LibraryAllowance | None:
        """The child's side; False/None (not hybrid) -> None. A bare True (an older parent) allows the
        kinds with no size bound."""
        if d is True:
            return cls({"gemm": 1 << 62, "conv": 1 << 62})
        if not d:
            return None
        calls = d.get("calls")
        return cls({str(k): int(v) for k, v in d["max_flops"].items()},
                   None if calls is None else tuple(LibraryCall.from_wire(c) for c in calls))

    def check(self, op: str, args: tuple, result: Any, kwargs: dict | None = None,
              role_of: Any = None) -> str | None:
        """Why this call is not allowed, or None. `role_of(tensor)` gives an operand's role (the call
        rule is skipped without it or without the reference's calls)."""
        kind = library_kind(op)
        if kind not in self.max_flops:
            allowed = ", ".join(sorted(self.max_flops)) or "none"
            return f"aten::{op} is a {kind or 'library'} call; the reference makes {allowed} calls only"
        flops = library_flops(op, args, result)
        if flops > self.max_flops[kind]:
            return (f"aten::{op} computes {flops:.3g} FLOPs, more than the reference's largest {kind} call "
                    f"({self.max_flops[kind]:.3g}): one library call may replace one of the reference's, "
                    "not several stacked together")
        if self.calls is None or role_of is None:
            return None
        kwargs = kwargs or {}
        out = kwargs.get("out")
        if out is not None:
            ptrs = {accessors.storage_ptr(a) for a in args if accessors.is_plain_tensor(a)}
            if not accessors.is_plain_tensor(out) or accessors.storage_ptr(out) in ptrs:
                return (f"aten::{op} writes out= into one of its own operands (an accumulation the reference "
                        "does not make)")
        cand = describe_call(op, args, kwargs, role_of)
        if isinstance(cand, str):
            return cand
        reasons = [mismatch(cand, ref) for ref in self.calls]
        if any(r is None for r in reasons):
            return None
        # the reason against the closest of the reference's calls: same op and shapes first
        order = sorted(range(len(reasons)), key=lambda i: (self.calls[i].op != cand.op,
                                                             self.calls[i].shapes != cand.shapes))
        why = reasons[order[0]] if order else "the reference makes no library call"
        return (f"aten::{op} ({cand.text()}) is not one of the reference's own library calls: {why}. "
                "The one library call may do exactly what the reference's own GEMM/convolution does; "
                "the rest is the Triton kernel's")


_TB = torch._C.TensorBase
_empty = torch.empty
_equal = torch.equal
_set = _TB.set_
_uint8 = torch.uint8


def _contiguous_bytes(t: torch.Tensor) -> torch.Tensor:
    """The bytes of a plain tensor's elements in row-major order (a copy: `empty` and `copy_`, then a
    byte view with `set_`; the ops of the guard's harness phase)."""
    c = _empty(accessors.shape(t), dtype=accessors.dtype(t), device=accessors.device(t))
    accessors.copy_(c, t)
    n = accessors.numel(c) * accessors.element_size(c)
    return _set(_empty(0, dtype=_uint8, device=accessors.device(c)), accessors.untyped_storage(c), 0, (n,), (1,))


def holds_reference_values(param: torch.Tensor, reference: list[torch.Tensor]) -> bool:
    """Does a parameter of the candidate's hold exactly the values of one of the reference's parameters or
    buffers (or of a transpose of one: the parent lends those too), element for element? Why: a parameter
    built otherwise at construction (drawn through its initialiser with scaled bounds, `uniform_(-s b, s b)`
    is s times the reference's draw from the same generator state) carries a scale of the epilogue into
    the one library call, which the call rule's op, shapes, scalars and roles cannot see."""
    dt, n = accessors.dtype(param), accessors.numel(param)
    mine = None
    for ref in reference:
        if accessors.dtype(ref) != dt or accessors.numel(ref) != n:
            continue
        if mine is None:
            mine = _contiguous_bytes(param)
        if _equal(mine, _contiguous_bytes(ref)):
            return True
    return False


def as_allowance(hybrid: Any) -> LibraryAllowance | None:
    """The guard's view of its `hybrid` setting: an allowance, its wire form (a dict), True (kinds
    with no size bound) or False/None (not hybrid)."""
    if isinstance(hybrid, LibraryAllowance):
        return hybrid
    return LibraryAllowance.from_wire(hybrid)


class _Recorder(TorchDispatchMode):
    def __init__(self, roles: dict[int, str]) -> None:
        super().__init__()
        self.roles = roles  # storage pointer -> role, of the inputs and the module's state
        self.calls: list[tuple[str, int]] = []
        self.described: list[LibraryCall] = []

    def role_of(self, t: torch.Tensor) -> str:
        return self.roles.get(accessors.storage_ptr(t), COMPUTED)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.name().split("::", 1)[-1].split(".", 1)[0]
        kind = library_kind(name)
        if kind is not None:
            self.calls.append((kind, library_flops(name, args, out)))
            call = describe_call(name, args, kwargs or {}, self.role_of)
            if isinstance(call, LibraryCall) and call not in self.described:
                self.described.append(call)
        return out


def record_library_calls(model: torch.nn.Module, inputs: list[Any]) -> LibraryAllowance:
    """Run the (trusted) reference once and note its library calls: the hybrid allowance."""
    roles = {accessors.storage_ptr(t): PARAM for t in list(model.parameters()) + list(model.buffers())}
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            roles[accessors.storage_ptr(x)] = input_role(i)
    rec = _Recorder(roles)
    with torch.no_grad(), rec:
        model(*inputs)
    largest: dict[str, int] = {}
    for kind, flops in rec.calls:
        largest[kind] = max(largest.get(kind, 0), flops)
    return LibraryAllowance(largest, tuple(rec.described))


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
