"""{{title}} fused in one Triton pass over the flattened inputs: {{formula}}.
Eager PyTorch writes the intermediate to memory and reads it back; fused, each element moves 12
bytes (two fp32 loads, one store) and the kernel is bandwidth-bound."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# 4096 elements over 8 warps: 16 per thread, four 16-byte vector loads per input in flight.
BLOCK_SIZE = 4096


@triton.jit
def {{kernel}}(a_ptr, b_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    start = tl.program_id(0) * BLOCK_SIZE
    offs = start + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    # kgym-scaffold: begin the fused math (out from a and b)
    out = {{triton_expr}}
    # kgym-scaffold: end
    tl.store(out_ptr + offs, out, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a = a.contiguous()
        b = b.contiguous()
        out = torch.empty_like(a)
        n = a.numel()
        {{kernel}}[(triton.cdiv(n, BLOCK_SIZE),)](a, b, out, n, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
        return out
