# problem: level1/20_LeakyReLU.py
# sizes: batch_size=3,dim=2500
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_SIZE = tl.constexpr(1024)  # a module-level constexpr the kernel reads


@triton.jit
def _leaky(x, slope):
    return tl.where(x >= 0, x, x * slope)


@triton.jit(do_not_specialize=["n_elements"])
def leaky_relu_kernel(x_ptr, out_ptr, n_elements, slope):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    offs = tl.max_contiguous(tl.multiple_of(offs, BLOCK_SIZE), BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, _leaky(x, slope), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super(ModelNew, self).__init__()  # noqa: UP008 (the style models write)
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x, memory_format=torch.contiguous_format)
        n = x.numel()
        leaky_relu_kernel[(triton.cdiv(n, 1024),)](x.contiguous(), out, n, self.negative_slope)
        return out
