"""Bitwise equality of two tensors, NaN-aware: the comparison both processes use for "unchanged".

The trusted parent compares every lent input with its pristine copy after every run ("Inputs are
read-only, bit for bit", docs/verify.md); the candidate's process compares the candidate's kept
storages with their state after load ("No forward reads state a previous forward wrote",
`kept_state.py`). Equal means the same bits at every position, or NaN in both (a NaN's payload may
differ). Values compared (`nan_to_num` first, the first version) hid NaN written over zeros, -0.0
over 0.0 and Inf over the largest float. Fast path: one `torch.equal` on integer views; the NaN-aware
pass runs only when some bits differ (chunked: bounded memory).

Everything is read through accessors and torch functions bound at import, before any candidate
code exists: in the candidate's process `torch.Tensor` is a Python class whose attributes a candidate
can replace, and `a.shape` there would run its code. Not covered: sparse or other non-strided layouts
(neither process lends or keeps them).
"""

from __future__ import annotations

import torch

from kgym.verify import accessors

CHUNK = 1 << 26  # elements compared at a time in the NaN-aware pass (as cases.CHUNK)

_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_TB = torch._C.TensorBase
_equal = torch.equal
_isnan = torch.isnan
_ne = torch.ne
_logical_and = torch.logical_and
_logical_not = torch.logical_not
_any = torch.any
_view_as_real = torch.view_as_real
_reshape = _TB.reshape
_is_complex = _TB.is_complex
_bool = _TB.__bool__


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Is `a` exactly `b`: the same shape and dtype, the same bits at every position or NaN in both?"""
    if accessors.shape(a) != accessors.shape(b) or accessors.dtype(a) != accessors.dtype(b):
        return False
    if _is_complex(a):
        a, b = _view_as_real(a), _view_as_real(b)
    if not accessors.is_floating_point(a):
        return bool(_equal(a, b))
    bits = _BITS[accessors.element_size(a)]
    a_bits, b_bits = accessors.view(a, bits), accessors.view(b, bits)
    if _equal(a_bits, b_bits):
        return True
    a_all, b_all = _reshape(a, (-1,)), _reshape(b, (-1,))
    ab_all, bb_all = _reshape(a_bits, (-1,)), _reshape(b_bits, (-1,))
    for i in range(0, accessors.numel(a_all), CHUNK):
        j = slice(i, i + CHUNK)
        differ = _ne(accessors.getitem(ab_all, j), accessors.getitem(bb_all, j))
        both_nan = _logical_and(_isnan(accessors.getitem(a_all, j)), _isnan(accessors.getitem(b_all, j)))
        if _bool(_any(_logical_and(differ, _logical_not(both_nan)))):
            return False
    return True
