"""Honest kernels near the edge of each runtime rule (docs/verify.md, "Runtime rules"): they must pass.

Each candidate does something a rule looks at and that is allowed: a weight prepared in __init__
by copying (the init guard), nn.Linear's RNG initialisation (the init guard), a widening dtype
conversion of a Triton result (output provenance), an output written through two launches and a
scratch buffer kept across forwards (provenance, launch roles), plain scalars, a float, a bool
and a constexpr as launch arguments (exact types), data-movement references (cat, transpose)
answered by real Triton copy kernels (provenance), a second kernel launched after one that calls
Triton's jitted tl.sigmoid (the CPU front-end check), and kept state (no forward reads what an earlier
one wrote): an output and a workspace kept and overwritten by every forward, constants built as the
reference builds them and only read, BatchNorm's running statistics updated as the reference's
training-mode forward updates them. Run with the static policy on, as a model's answer would be.
"""

import sys
from pathlib import Path

import pytest

from kgym.verify.parent.cases import N_CASES

sys.path.insert(0, str(Path(__file__).parent / "exploits"))
from construction_sources import GATED_HONEST, GATED_REFERENCE, ROW_KERNELS, SIGMOID_KERNEL  # noqa: E402
from data_movement_refs import CAT_REFERENCE, TRANSPOSE_REFERENCE  # noqa: E402

from exploit_helpers import assert_honest_pass  # noqa: E402

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

# Kept state (kgym/verify/candidate/kept_state.py: no forward reads what an earlier one wrote). A workspace
# buffer and an output tensor kept across forwards, both overwritten by every forward: poisoned
# before each forward, which does not notice.
KEPT_OUTPUT_AND_WORKSPACE = ROW_KERNELS + SIGMOID_KERNEL + '''
class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(n))
        self.register_buffer("gate", torch.empty(n))
        self.out = None

    def forward(self, x):
        n = self.w.numel()
        sigmoid_kernel[(1,)](self.w, self.gate, n, BLOCK=triton.next_power_of_2(n))
        x = x.contiguous()
        if self.out is None:
            self.out = torch.empty_like(x)
        n_cols = x.shape[-1]
        row_mul_kernel[(x.numel() // n_cols,)](x, self.gate, self.out, x.numel() // n_cols, n_cols, ADD=False,
                                               BLOCK=triton.next_power_of_2(n_cols))
        return self.out
'''

# Constants built at construction exactly as the reference builds them (the same arithmetic the
# reference's __init__ does) and only read by forward: never written, so never poisoned. The reference
# keeps one as a plain attribute and moves it in forward (the trusted parent runs it); the candidate
# registers both as buffers (the second non-persistent, out of its state dict as the reference's plain
# attribute is), so `.to(device)` moves them at load: moving a plain attribute in forward is a host copy,
# which the guard refuses on CUDA. Honest plain tensor attributes are kept_output_and_workspace_overwritten's.
CONSTANTS_REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("scale", torch.linspace(0.5, 1.5, n))
        self.shift = torch.randn(n) * 0.1

    def forward(self, x):
        # a plain attribute is no buffer: `.to(device)` leaves it where it was made (KernelBench's harness
        # does the same), so it is moved here, on both sides
        return x * self.scale + self.shift.to(x.device)


def get_inputs():
    return [torch.randn(37, 61)]


def get_init_inputs():
    return [61]
'''

CONSTANTS_READ = IMPORTS + '''

@triton.jit
def affine_rows(x_ptr, s_ptr, b_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    s = tl.load(s_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, x * s + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("scale", torch.linspace(0.5, 1.5, n))
        self.register_buffer("shift", torch.randn(n) * 0.1, persistent=False)

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n_cols = x.shape[-1]
        affine_rows[(x.numel() // n_cols,)](x, self.scale, self.shift, out, n_cols,
                                            BLOCK=triton.next_power_of_2(n_cols))
        return out
'''

# The reference's forward updates buffers of its own: nn.BatchNorm1d in training mode (the verifier
# never calls eval(): models run in training mode) normalises with the batch's statistics and updates
# its running mean and variance. The candidate mirrors it, running statistics included: buffers a
# forward writes are scratch (poisoned, NaN, before the next), never refused, and the output never
# reads them.
BATCHNORM_REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bn = nn.BatchNorm1d(n)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(37, 61)]


def get_init_inputs():
    return [61]
'''

BATCHNORM_TRAINING = IMPORTS + '''

@triton.jit
def batchnorm_train(x_ptr, w_ptr, b_ptr, mean_ptr, var_ptr, out_ptr, n_rows, n_cols, eps, momentum,
                    BLOCK: tl.constexpr):
    # one program per channel (column): 2 reads of the column's n_rows values, 1 write
    c = tl.program_id(0)
    rows = tl.arange(0, BLOCK)
    mask = rows < n_rows
    x = tl.load(x_ptr + rows * n_cols + c, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_rows
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / n_rows
    y = diff / tl.sqrt(var + eps) * tl.load(w_ptr + c) + tl.load(b_ptr + c)
    tl.store(out_ptr + rows * n_cols + c, y, mask=mask)
    # as the reference's training-mode forward: running statistics, the variance unbiased
    tl.store(mean_ptr + c, (1.0 - momentum) * tl.load(mean_ptr + c) + momentum * mean)
    tl.store(var_ptr + c, (1.0 - momentum) * tl.load(var_ptr + c) + momentum * var * n_rows / (n_rows - 1))


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bn = nn.BatchNorm1d(n)

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n_rows, n_cols = x.shape
        bn = self.bn
        batchnorm_train[(n_cols,)](x, bn.weight, bn.bias, bn.running_mean, bn.running_var, out, n_rows, n_cols,
                                   bn.eps, bn.momentum, BLOCK=triton.next_power_of_2(n_rows))
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
    # kept state: scratch overwritten by every forward, constants only read, a mirrored BatchNorm
    "kept_output_and_workspace_overwritten": (GATED_REFERENCE, KEPT_OUTPUT_AND_WORKSPACE),
    "constant_buffer_and_attribute_read": (CONSTANTS_REFERENCE, CONSTANTS_READ),
    "batchnorm_running_stats_as_the_reference": (BATCHNORM_REFERENCE, BATCHNORM_TRAINING),
}


@pytest.mark.parametrize("kind", sorted(HONEST))
def test_honest_kernel_near_a_rule_passes(verifier, relu_reference, kind):
    reference, source = HONEST[kind]
    v = verifier.verify(reference or relu_reference, source)
    # the correctness share (0.5): the CPU earns no speed credit, a GPU may (0.5 to 1)
    assert_honest_pass(v, cases=N_CASES)
