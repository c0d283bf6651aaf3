"""Normalising a KernelBook row to the KernelBench interface, with its inputs scaled up.

KernelBook modules take constructor arguments (`get_init_inputs()` returns `[args, kwargs]`) and tiny
inputs (`torch.rand([4, 4, 4, 4])`). kgym appends a `Model` subclass that bakes the arguments in, and
new `get_inputs()`/`get_init_inputs()` whose tensors keep their shapes but multiply the leading
(batch) dimension so the task holds the element count its size asks for (about 1M at full size).
The answer gets the same treatment: `ModelNew` subclasses the row's `<entry_point>New`.
The row's code is trusted data (like a reference), so it is imported here, in the parent, to read
its inputs and to check that a batch-scaled input still runs. Does not pick rows (the operation does).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch

from kgym.tasks.families.kernelbook.dataset import KernelBookRow
from kgym.tasks.spec import TaskError
from kgym.verify.parent.reference import import_source

MARK = "# ---- kgym: normalised to the KernelBench interface ----"


@dataclass(frozen=True)
class InputSpec:
    """How one input of the row is rebuilt: a tensor (shape, dtype, kind) or a literal."""

    shape: tuple[int, ...] | None
    dtype: str | None
    kind: str  # rand (non-negative floats) | randn | randint | literal
    low: int = 0
    high: int = 1
    literal: str = ""


@dataclass(frozen=True)
class Probe:
    args: str  # repr of the constructor's positional arguments
    kwargs: str  # repr of its keyword arguments
    inputs: tuple[InputSpec, ...]
    base_elements: int  # elements of all tensor inputs at batch factor 1
    batch_scalable: bool  # does the module still run with the leading dimension doubled?


def _literal(value: Any, what: str) -> str:
    text = repr(value)
    try:
        ok = ast.literal_eval(text) == value
    except (ValueError, SyntaxError):
        ok = False
    if not ok:
        raise TaskError(f"KernelBook row: {what} {text[:80]} cannot be written back as a literal")
    return text


def _import(row: KernelBookRow):
    try:
        module, _ = import_source(row.python_code, "kernelbook")
    except Exception as e:  # noqa: BLE001 - any failure of the row's code is the row's problem
        raise TaskError(f"KernelBook row {row.index} ({row.entry_point}): importing python_code failed: "
                        f"{type(e).__name__}: {e}") from None
    for need in (row.entry_point, "get_inputs", "get_init_inputs"):
        if not hasattr(module, need):
            raise TaskError(f"KernelBook row {row.index}: python_code defines no {need!r}")
    return module


def _split_init(init: Any) -> tuple[list, dict]:
    # KernelBook: [args, kwargs]; KernelBench: a flat list of positional arguments.
    if isinstance(init, (list, tuple)) and len(init) == 2 and isinstance(init[0], (list, tuple)) \
            and isinstance(init[1], dict):
        return list(init[0]), dict(init[1])
    return list(init), {}


def _describe(x: Any, i: int) -> InputSpec:
    if not isinstance(x, torch.Tensor):
        return InputSpec(None, None, "literal", literal=_literal(x, f"input {i}"))
    dtype = str(x.dtype).replace("torch.", "")
    if x.is_floating_point():
        kind = "rand" if x.numel() and float(x.min()) >= 0 else "randn"
        return InputSpec(tuple(x.shape), dtype, kind)
    if x.dtype == torch.bool:
        return InputSpec(tuple(x.shape), dtype, "randint", 0, 2)
    lo, hi = (int(x.min()), int(x.max()) + 1) if x.numel() else (0, 1)
    return InputSpec(tuple(x.shape), dtype, "randint", lo, hi)


def _scaled(inputs: tuple[InputSpec, ...], batch: int) -> list[Any]:
    out = []
    for s in inputs:
        if s.kind == "literal":
            out.append(ast.literal_eval(s.literal))
            continue
        shape = ((s.shape[0] * batch,) + s.shape[1:]) if s.shape else s.shape
        if s.kind == "randint":
            out.append(torch.randint(s.low, s.high, shape).to(getattr(torch, s.dtype)))
        else:
            out.append((torch.rand if s.kind == "rand" else torch.randn)(shape, dtype=getattr(torch, s.dtype)))
    return out


@lru_cache(maxsize=256)
def probe(row: KernelBookRow) -> Probe:
    module = _import(row)
    args, kwargs = _split_init(module.get_init_inputs())
    torch.manual_seed(0)
    raw = list(module.get_inputs())
    inputs = tuple(_describe(x, i) for i, x in enumerate(raw))
    base = sum(x.numel() for x in raw if isinstance(x, torch.Tensor))
    if base == 0:
        raise TaskError(f"KernelBook row {row.index} ({row.entry_point}): get_inputs() returns no tensor")
    cls = getattr(module, row.entry_point)
    try:
        model = cls(*args, **kwargs)
        with torch.no_grad():
            model(*_scaled(inputs, 1))
    except Exception as e:  # noqa: BLE001
        raise TaskError(f"KernelBook row {row.index} ({row.entry_point}): the module does not run on its own "
                        f"inputs: {type(e).__name__}: {e}") from None
    try:
        with torch.no_grad():
            model(*_scaled(inputs, 2))
        scalable = any(s.shape for s in inputs)
    except Exception:  # noqa: BLE001 - not batch-scalable: keep the row's own shapes
        scalable = False
    return Probe(_literal(args, "constructor args"), _literal(kwargs, "constructor kwargs"), inputs, base, scalable)


def batch_factor(p: Probe, target_elements: int) -> int:
    if not p.batch_scalable:
        return 1
    return max(1, round(target_elements / p.base_elements))


def _input_expr(s: InputSpec) -> str:
    if s.kind == "literal":
        return s.literal
    dims = ", ".join(["kgym_batch * " + str(s.shape[0])] + [str(d) for d in s.shape[1:]]) if s.shape else ""
    shape = f"({dims},)" if s.shape else "()"
    dtype = f"torch.{s.dtype}"
    if s.kind == "randint":
        return f"torch.randint({s.low}, {s.high}, {shape}).to({dtype})"
    gen = "torch.rand" if s.kind == "rand" else "torch.randn"
    return f"{gen}({shape}, dtype={dtype}) * kgym_scale + kgym_shift"


def reference_source(row: KernelBookRow, batch: int, scale: float, shift: float) -> str:
    """The row in KernelBench form. The appended names carry a `kgym_` prefix so they cannot
    clash with the row's own globals."""
    p = probe(row)
    lines = [row.python_code.rstrip(), "", "", MARK, "import torch", "", "",
             f"class Model({row.entry_point}):", "    def __init__(self):",
             f"        super().__init__(*{p.args}, **{p.kwargs})", "", "",
             f"kgym_batch = {batch}", f"kgym_scale = {scale!r}", f"kgym_shift = {shift!r}", "", "",
             "def get_inputs():", "    return ["]
    lines += [f"        {_input_expr(s)}," for s in p.inputs]
    lines += ["    ]", "", "", "def get_init_inputs():", "    return []", ""]
    return "\n".join(lines)


def answer_source(row: KernelBookRow, code: str | None) -> str | None:
    """A row's Triton answer with `ModelNew` bound to the row's constructor arguments."""
    if code is None:
        return None
    new = f"{row.entry_point}New"
    if not re.search(rf"^class {re.escape(new)}\b", code, re.MULTILINE):
        return code  # not KernelBook's convention: leave it to the verifier to judge as it is
    p = probe(row)
    return "\n".join([code.rstrip(), "", "", MARK, f"class ModelNew({new}):", "    def __init__(self):",
                      f"        super().__init__(*{p.args}, **{p.kwargs})", ""])
