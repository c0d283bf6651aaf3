"""The fast passes of the parent's checks on a GPU, one fused kernel each: `cases.within` (the
comparison) and `cases.unchanged` (inputs bit for bit) for CUDA tensors.

Trusted parent code only (imported lazily by `cases.within` when it judges CUDA tensors; the
candidate's process never loads it). `cases.within` on the CPU mirrors `cases.compare`'s float32
expressions element for element; on a GPU those expressions cost ~12 passes over the output and the
reference (35.6 ms for KernelBench's 6.4 GB ReLU output on an H200, against 126 ms for `compare`), and
every timed run is judged ("Every output is judged", docs/verify.md). This kernel reads each value of
the output and the reference once: per block, the largest excess `|o - r| - k1 |r|` (NaN as +inf) and
the float64 sum of `|r|`; the host passes the output only when the sum is finite and not tiny and
`max excess <= k2 * scale`, scale = min(cap, sum / n) (`cap`: the case's, as `compare` has it).

Soundness (it may pass only what `compare` passes): `compare` passes an element when `fl(|fl(o - r)|)
<= fl(fl(tol * |r|) + fl32(tol * scale))`, each rounding within u = 2^-24 (float32; 2^-53 in
float64); here k1 = k2 = tol * (1 - 2^-16) shrink both terms by far more than the few roundings on
either side (the excess may be computed with a fused multiply-add, the block sums in any order: the
scale moves by at most n * 2^-53 relative, under 2^-20 for n < 2^33), so an element passed here is
within `compare`'s bound. Subnormals: a GPU may flush them to zero, which can shrink an excess only
where it is far below tol * scale, unless the whole output is tiny; a scale below 2^-100 is left to
`compare`. An output within 2^-16 of the bound relative to it is left to `compare` too (it decides;
an honest output is orders of magnitude inside).
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

MARGIN = 1.0 - 2.0 ** -16  # both terms of the bound shrunk by this much: see the module docstring
MIN_SCALE = 2.0 ** -100  # below it subnormal flushing could matter: `compare` decides
BLOCK = 4096
DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)  # others: the torch pass (cases.within)


@triton.jit
def _excess_kernel(o_ptr, r_ptr, part_ptr, n, k1, F64: tl.constexpr, BLOCK: tl.constexpr):
    # bytes moved: one read of each output and reference value, 16 bytes written per block
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if F64:
        o = tl.load(o_ptr + offs, mask=mask, other=0.0).to(tl.float64)
        r = tl.load(r_ptr + offs, mask=mask, other=0.0).to(tl.float64)
    else:
        o = tl.load(o_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    ar = tl.abs(r)
    e = tl.abs(o - r) - k1 * ar
    e = tl.where(e == e, e, float("inf"))  # a NaN output (or reference) must surface as a failure
    e = tl.where(mask, e, -float("inf"))
    tl.store(part_ptr + 2 * pid, tl.max(e, axis=0).to(tl.float64))
    tl.store(part_ptr + 2 * pid + 1, tl.sum(tl.where(mask, ar, 0.0).to(tl.float64), axis=0))


def within_cuda(out: torch.Tensor, ref: torch.Tensor, strict: float, cap: float = 1.0) -> bool:
    """True only where `cases.compare(out, ref, cap=cap)` passes at the strict tolerance `strict`; False where
    it cannot tell (`compare` then decides). Both floating, same shape, on one CUDA device."""
    with torch.cuda.device(ref.device):  # Triton launches on the current device: make it the tensors'
        return within_fused(out, ref, strict, cap)


def within_fused(out: torch.Tensor, ref: torch.Tensor, strict: float, cap: float = 1.0) -> bool:
    """`within_cuda`'s pass on the tensors' device as it is current (on the CPU only under Triton's
    interpreter: the tests hold its decisions to `cases.within`'s there)."""
    o = out.reshape(-1).contiguous()
    r = ref.reshape(-1).contiguous()
    n = r.numel()
    if n == 0:
        return True
    blocks = triton.cdiv(n, BLOCK)
    parts = torch.empty((blocks, 2), dtype=torch.float64, device=r.device)
    k = strict * MARGIN
    _excess_kernel[(blocks,)](o, r, parts, n, k, F64=ref.dtype == torch.float64, BLOCK=BLOCK)
    worst, total = (float(x) for x in torch.stack((parts[:, 0].max(), parts[:, 1].sum())).tolist())
    if not math.isfinite(total) or total / n < MIN_SCALE:
        return False
    return worst <= k * min(cap, total / n)


@triton.jit
def _differ_kernel(a_ptr, b_ptr, part_ptr, n, BLOCK: tl.constexpr):
    # bytes moved: one read of each word of both tensors, 4 bytes written per block
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    b = tl.load(b_ptr + offs, mask=mask, other=0)
    tl.store(part_ptr + pid, tl.max((a != b).to(tl.int32), axis=0))


def identical_words(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Are two flat integer tensors of one dtype and length equal word for word? One read of each
    and one synchronisation (the launch is on the tensors' device; on the CPU only under Triton's
    interpreter, for the tests)."""
    n = a.numel()
    blocks = triton.cdiv(n, BLOCK)
    parts = torch.empty(blocks, dtype=torch.int32, device=a.device)
    _differ_kernel[(blocks,)](a, b, parts, n, BLOCK=BLOCK)
    return not bool(parts.any())


def identical_cuda(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True only where every byte of `a` is the byte of `b` at the same place: then `bitwise.same(a, b)`
    is True (same shape and dtype, the caller's check; equal bits at every position); False where a
    byte differs (`bitwise.same` then decides: NaN in both passes there). Both contiguous, on one CUDA
    device. Why: `bitwise.same`'s `torch.equal` on a GPU writes a full-size bool tensor and reads it
    back (KernelBench's 6.4 GB ReLU input: the 0.45 s of input checks of an H200 verdict, ~13 ms a
    run); this reads each word of both once."""
    nbytes = a.numel() * a.element_size()
    if nbytes == 0:
        return True
    wa, wb = a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8)
    if nbytes % 4 == 0 and wa.data_ptr() % 4 == 0 and wb.data_ptr() % 4 == 0:
        wa, wb = wa.view(torch.int32), wb.view(torch.int32)
    with torch.cuda.device(a.device):  # Triton launches on the current device: make it the tensors'
        return identical_words(wa, wb)
