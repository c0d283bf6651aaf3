"""Honest kernels near the edge of each runtime rule (docs/verify.md, "Runtime rules"): they must pass.

Each candidate does something a rule looks at and that is allowed: a weight prepared in __init__
by copying (the init guard), nn.Linear's RNG initialisation (the init guard), a widening dtype
conversion of a Triton result (output provenance), an output written through two launches and a
scratch buffer kept across forwards (provenance, launch roles), plain scalars, a float, a bool
and a constexpr as launch arguments (exact types), data-movement references (cat, transpose)
answered by real Triton copy kernels (provenance), and a second kernel launched after one that calls
Triton's jitted tl.sigmoid (the CPU front-end check). Run with the static policy on, as a model's
answer would be.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "exploits"))
from construction_sources import GATED_HONEST, GATED_REFERENCE  # noqa: E402
from data_movement_refs import CAT_REFERENCE, TRANSPOSE_REFERENCE  # noqa: E402

IMPORTS = '''import torch
import torch.nn as nn
import triton
import triton.language as tl
'''

LINEAR_REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.lin = nn.Linear(n_in, n_out, bias=False)

    def forward(self, x):
        return self.lin(x)


def get_inputs():
    return [torch.randn(7, 19)]


def get_init_inputs():
    return [19, 11]
'''

# The weight, transposed and made contiguous once in __init__ (a copy of the parameter): the kernel
# reads the cached copy. nn.Linear's own initialisation (uniform_) runs under the init guard too.
CACHED_WEIGHT = IMPORTS + '''

@triton.jit
def row_matmul(x_ptr, w_ptr, out_ptr, K, N, BK: tl.constexpr, BN: tl.constexpr):
    row = tl.program_id(0)
    k = tl.arange(0, BK)
    n = tl.arange(0, BN)
    x = tl.load(x_ptr + row * K + k, mask=k < K, other=0.0)
    w = tl.load(w_ptr + k[:, None] * N + n[None, :], mask=(k[:, None] < K) & (n[None, :] < N), other=0.0)
    tl.store(out_ptr + row * N + n, tl.sum(x[:, None] * w, axis=0), mask=n < N)


class ModelNew(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.lin = nn.Linear(n_in, n_out, bias=False)
        self.register_buffer("w_t", self.lin.weight.detach().t().contiguous())

    def forward(self, x):
        m, k = x.shape
        n = self.w_t.shape[1]
        out = torch.empty(m, n, device=x.device, dtype=x.dtype)
        row_matmul[(m,)](x, self.w_t, out, k, n, BK=32, BN=16)
        return out
'''

RELU_HALF_TO_FLOAT_REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x).float()


def get_inputs():
    return [torch.randn(61, 33).half()]


def get_init_inputs():
    return []
'''

# relu in fp16 by Triton, then widened to fp32 by torch (value-preserving: every fp16 is an fp32).
WIDENED_OUTPUT = IMPORTS + '''

@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        half = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](x, half, n, BLOCK=1024)
        return half.float()
'''

RELU_KERNELS = IMPORTS + '''

@triton.jit
def scale_copy(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr, CLAMP: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0) * alpha
    if CLAMP:
        x = tl.maximum(x, 0.0)
    tl.store(out_ptr + offs, x, mask=mask)

'''

# Two launches through a scratch buffer kept across forwards (allocated lazily in the first one),
# float and constexpr scalar arguments, a tuple grid.
SEVERAL_LAUNCHES = RELU_KERNELS + '''
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scratch = None

    def forward(self, x):
        if self.scratch is None:
            self.scratch = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, 4096),)
        scale_copy[grid](x, self.scratch, n, 1.0, BLOCK=4096, CLAMP=False)
        out = torch.empty_like(x)
        scale_copy[grid](self.scratch, out, n, 1.0, BLOCK=4096, CLAMP=True)
        return out
'''

# The output allocated with torch.zeros (a fill: no content of any input) and written by Triton.
ZEROS_THEN_KERNEL = RELU_KERNELS + '''
class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.zeros_like(x)
        n = x.numel()
        scale_copy[(triton.cdiv(n, 4096),)](x, out, n, 1.0, BLOCK=4096, CLAMP=True)
        return out
'''

CAT_KERNEL = IMPORTS + '''

@triton.jit
def cat_rows(a_ptr, b_ptr, out_ptr, NA, NB, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + row * NA + cols, mask=cols < NA, other=0.0)
    tl.store(out_ptr + row * (NA + NB) + cols, a, mask=cols < NA)
    b = tl.load(b_ptr + row * NB + cols, mask=cols < NB, other=0.0)
    tl.store(out_ptr + row * (NA + NB) + NA + cols, b, mask=cols < NB)


class ModelNew(nn.Module):
    def forward(self, a, b):
        rows, na = a.shape
        nb = b.shape[1]
        out = torch.empty(rows, na + nb, device=a.device, dtype=a.dtype)
        cat_rows[(rows,)](a, b, out, na, nb, BLOCK=32)
        return out
'''

TRANSPOSE_KERNEL = IMPORTS + '''

@triton.jit
def transpose_kernel(x_ptr, out_ptr, R, C, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.arange(0, BR)
    c = tl.arange(0, BC)
    mask = (r[:, None] < R) & (c[None, :] < C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + c[None, :] * R + r[:, None], x, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        r, c = x.shape
        out = torch.empty(c, r, device=x.device, dtype=x.dtype)
        transpose_kernel[(1,)](x, out, r, c, BR=64, BC=32)
        return out
'''

RELU_REFERENCE = None  # the session's relu fixture

HONEST = {
    "cached_weight_copied_in_init": (LINEAR_REFERENCE, CACHED_WEIGHT),
    "widened_output_dtype": (RELU_HALF_TO_FLOAT_REFERENCE, WIDENED_OUTPUT),
    "several_launches_and_a_kept_scratch": (RELU_REFERENCE, SEVERAL_LAUNCHES),
    "zeros_then_kernel": (RELU_REFERENCE, ZEROS_THEN_KERNEL),
    "cat_by_a_triton_copy": (CAT_REFERENCE, CAT_KERNEL),
    "transpose_by_a_triton_kernel": (TRANSPOSE_REFERENCE, TRANSPOSE_KERNEL),
    # two kernels, the first calling Triton's jitted tl.sigmoid: the interpreter left triton.language
    # patched after it, and the second kernel's front-end check failed (frontend.py, `_swapped`)
    "second_kernel_after_tl_sigmoid": (GATED_REFERENCE, GATED_HONEST),
}


@pytest.mark.parametrize("kind", sorted(HONEST))
def test_honest_kernel_near_a_rule_passes(verifier, relu_reference, kind):
    reference, source = HONEST[kind]
    v = verifier.verify(reference or relu_reference, source)
    assert v.error is None, v.error
    assert v.passed is True, (kind, v.gate, v.reason)
    assert v.cases_passed == len(v.cases) == 6
