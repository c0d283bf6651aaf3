"""How the harness reads values a candidate may have touched: exact types and accessors bound early.

Bound when kgym's child modules are imported, before any candidate code exists in the process. The
accessors come from `torch._C.TensorBase` and `torch._C.StorageBase`, C types whose attributes
cannot be reassigned; `torch.Tensor` is a Python class a candidate can write properties onto
(`T = torch.Tensor; T.shape = property(...)`), so the harness never reads `x.shape` through it.
A value that is not of an exact type kgym knows (`is_plain_tensor`, `type(x) is int`, ...) is
refused, never inspected: inspecting it (repr, hash, __index__, a property) would run candidate
code outside the guard.
"""

from __future__ import annotations

from typing import Any

import torch

_TB = torch._C.TensorBase
_SB = torch._C.StorageBase

shape = _TB.shape.__get__
dtype = _TB.dtype.__get__
device = _TB.device.__get__
layout = _TB.layout.__get__
is_sparse = _TB.is_sparse.__get__
data_ptr = _TB.data_ptr
untyped_storage = _TB.untyped_storage
storage_offset = _TB.storage_offset
element_size = _TB.element_size
numel = _TB.numel
stride = _TB.stride
is_contiguous = _TB.is_contiguous
copy_ = _TB.copy_
fill_ = _TB.fill_
view = _TB.view
getitem = _TB.__getitem__
is_floating_point = _TB.is_floating_point
_storage_ptr = _SB.data_ptr
_storage_nbytes = _SB.nbytes

PLAIN_TENSOR_TYPES = (torch.Tensor, torch.nn.Parameter)
# Scalars a launch argument or a reply may hold, matched by exact type (bool is not an int here).
SCALAR_TYPES = (int, float, bool, str, type(None))


def is_plain_tensor(x: Any) -> bool:
    """A torch.Tensor or nn.Parameter itself, not a subclass (whose dunders are candidate code)."""
    t = type(x)
    return t is PLAIN_TENSOR_TYPES[0] or t is PLAIN_TENSOR_TYPES[1]


def is_scalar(x: Any) -> bool:
    t = type(x)
    return any(t is s for s in SCALAR_TYPES)


def storage_span(t: torch.Tensor) -> tuple[int, int]:
    """(first byte, one past the last byte) of the storage behind a plain tensor."""
    s = untyped_storage(t)
    start = _storage_ptr(s)
    return start, start + _storage_nbytes(s)


def storage_ptr(t: torch.Tensor) -> int:
    return _storage_ptr(untyped_storage(t))
