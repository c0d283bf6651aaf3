"""On the CPU, a kernel's loads and stores stay inside the storages of its launch's tensors.

Triton's interpreter turns every `tl.load`/`tl.store`/atomic into a read or write of raw host addresses,
so an out-of-bounds offset from a tensor the kernel was given reaches any memory of the candidate's
process: the rest of a lent file's last page, the rest of a kept storage's malloc chunk, a chunk an earlier
forward freed. Memory no rule copies, compares or poisons carried work from one forward to every later
one: weight-only work done by the first forward and read by the timed runs (red team on speed credit,
2026-12-07, tests/exploits/test_lent_tail_carry.py). The kept-state rule covers a storage's bytes, not
its allocation, and the lent buffers' own tails are poisoned by the parent (`SharedArena.poison_tails`);
this rule closes the class on the CPU whatever memory a kernel aims at.

While the interpreter runs a launch (`GridExecutor.__call__`), the spans of the storages of its tensor
arguments (tuples and tensor descriptors' bases included) are the only memory its memory operations
reach: every unmasked lane outside them reads poison (bytes 0xFF: NaN in every floating dtype, -1 in
integers) and writes nothing, as a masked-off lane; an atomic compare-and-swap (which has no mask) outside
them raises. An honest kernel touches only its tensors and does not notice; a sloppy one that reads past
its tensor unmasked read whatever lay there (garbage, as on a GPU) and now reads poison. Outside a launch
no memory is reachable. Not on a GPU: compiled kernels address device memory directly (the open GPU
items of test_lent_tail_carry.py).

The wrapped methods of `InterpreterBuilder` and `GridExecutor` are the classes' own attributes from
`install` on; `intact()` (asked at every interpreted launch, `LaunchCounter.pin_interpreted`) says
whether they still are and the builder instance shadows none of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kgym.verify import accessors

POISON_BYTE = 0xFF
WRAPPED_BUILDER = ("create_masked_load", "create_masked_store", "create_atomic_rmw", "create_atomic_cas")

_spans: list[tuple[int, int]] | None = None  # the running launch's storages; None outside a launch
_installed: dict[str, Any] = {}  # what `intact` compares with


def _collect(arg: Any, out: list[tuple[int, int]], descriptor: type | None) -> None:
    if isinstance(arg, tuple):
        for a in arg:
            _collect(a, out, descriptor)
    elif descriptor is not None and isinstance(arg, descriptor):
        _collect(arg.base, out, descriptor)
    elif isinstance(arg, torch.Tensor):
        out.append(accessors.storage_span(arg))


def _inside(addr: np.ndarray, size: int) -> np.ndarray:
    inside = np.zeros(addr.shape, dtype=bool)
    for start, end in _spans or ():
        inside |= (addr >= np.uint64(start)) & (addr + np.uint64(size) <= np.uint64(end))
    return inside


def _all_inside(addr: np.ndarray, size: int) -> bool:
    """Every lane's element inside one span: the common case, two reductions instead of a mask per span."""
    if addr.size == 0:
        return True
    lo, hi = int(addr.min()), int(addr.max()) + size
    return any(start <= lo and hi <= end for start, end in _spans or ())


def _poison(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    dt = np.dtype(dtype)
    return np.frombuffer(bytes([POISON_BYTE]) * (dt.itemsize * int(np.prod(shape, dtype=np.int64))),
                         dtype=dt).reshape(shape).copy()


def install() -> None:
    """Wrap the interpreter's memory operations (once, in the candidate's process, before its import)."""
    if _installed:
        return
    from triton.runtime import interpreter as ti

    builder_cls, executor_cls = ti.InterpreterBuilder, ti.GridExecutor
    descriptor = getattr(ti, "TensorDescriptor", None)
    np_dtype = ti._get_np_dtype
    handle_cls = ti.TensorHandle
    int1 = ti.tl.int1
    call = executor_cls.__call__
    load, store = builder_cls.create_masked_load, builder_cls.create_masked_store
    rmw, cas = builder_cls.create_atomic_rmw, builder_cls.create_atomic_cas

    def executor_call(self, *args, **kwargs):
        global _spans
        spans: list[tuple[int, int]] = []
        for a in (*args, *kwargs.values()):
            _collect(a, spans, descriptor)
        previous, _spans = _spans, spans
        try:
            return call(self, *args, **kwargs)
        finally:
            _spans = previous

    def lanes(ptrs: Any, mask: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """(mask, inside) of each lane; None when every lane is inside one span (nothing to change)."""
        addr = np.asarray(ptrs.data).astype(np.uint64, copy=False)
        size = np.dtype(np_dtype(ptrs.get_element_ty())).itemsize
        if _all_inside(addr, size):
            return None
        m = np.broadcast_to(np.asarray(mask.data, dtype=bool), addr.shape)
        return m, _inside(addr, size)

    def masked_load(self, ptrs, mask, other, cache_policy, is_volatile):
        judged = lanes(ptrs, mask)
        if judged is None:
            return load(self, ptrs, mask, other, cache_policy, is_volatile)
        m, inside = judged
        outside = m & ~inside
        if outside.any():
            dtype_tt = ptrs.get_element_ty()
            poison = _poison(outside.shape, np_dtype(dtype_tt))
            if other is not None:
                poison = np.where(outside, poison, np.broadcast_to(np.asarray(other.data), outside.shape))
            mask, other = handle_cls(m & inside, int1), handle_cls(poison, dtype_tt)
        return load(self, ptrs, mask, other, cache_policy, is_volatile)

    def masked_store(self, ptrs, value, mask, cache_policy):
        judged = lanes(ptrs, mask)
        if judged is None:
            return store(self, ptrs, value, mask, cache_policy)
        m, inside = judged
        if (m & ~inside).any():
            mask = handle_cls(m & inside, int1)
        return store(self, ptrs, value, mask, cache_policy)

    def atomic_rmw(self, rmwOp, ptr, val, mask, sem, scope):  # noqa: N803 - Triton's own parameter name
        judged = lanes(ptr, mask)
        if judged is None:
            return rmw(self, rmwOp, ptr, val, mask, sem, scope)
        m, inside = judged
        if (m & ~inside).any():
            mask = handle_cls(m & inside, int1)
        return rmw(self, rmwOp, ptr, val, mask, sem, scope)

    def atomic_cas(self, ptr, cmp, val, sem, scope):
        addr = np.asarray(ptr.data).astype(np.uint64, copy=False)
        if not _inside(addr, np.dtype(np_dtype(ptr.get_element_ty())).itemsize).all():
            raise RuntimeError("kgym: an atomic_cas outside the storages of the launch's tensors")
        return cas(self, ptr, cmp, val, sem, scope)

    executor_cls.__call__ = executor_call
    builder_cls.create_masked_load = masked_load
    builder_cls.create_masked_store = masked_store
    builder_cls.create_atomic_rmw = atomic_rmw
    builder_cls.create_atomic_cas = atomic_cas
    _installed.update({"builder": builder_cls, "executor": executor_cls, "instance": ti.interpreter_builder,
                       "call": executor_call, **{n: builder_cls.__dict__[n] for n in WRAPPED_BUILDER}})


def intact() -> bool:
    """The wrappers are still the classes' attributes and the builder instance shadows none of them."""
    if not _installed:
        return False
    builder, executor = _installed["builder"], _installed["executor"]
    if executor.__dict__.get("__call__") is not _installed["call"]:
        return False
    if any(builder.__dict__.get(n) is not _installed[n] for n in WRAPPED_BUILDER):
        return False
    instance_state = object.__getattribute__(_installed["instance"], "__dict__")
    return not any(n in instance_state for n in (*WRAPPED_BUILDER, "__call__"))
