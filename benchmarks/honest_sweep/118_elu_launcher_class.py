# problem: level1/31_ELU.py
# sizes: batch_size=4,dim=999
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def elu_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    y = tl.where(x > 0, x, alpha * (tl.exp(x) - 1.0))
    tl.store(y_ptr + offs, y, mask=m)


class ElementwiseLauncher:
    """Flattens the input, picks a block size once per element count, launches, restores the shape."""

    def __init__(self, kernel, max_block=2048):
        self.kernel = kernel
        self.max_block = max_block
        self.blocks = {}

    def block_for(self, n):
        if n not in self.blocks:
            self.blocks[n] = min(self.max_block, triton.next_power_of_2(n))
        return self.blocks[n]

    def __call__(self, x, *scalars):
        flat = x.contiguous().view(-1)
        out = torch.empty_like(flat)
        n = flat.numel()
        block = self.block_for(n)
        self.kernel[(triton.cdiv(n, block),)](flat, out, n, *scalars, BLOCK=block)
        return out.view(x.shape)


class ModelNew(nn.Module):
    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha
        self.launch = ElementwiseLauncher(elu_kernel)

    def forward(self, x):
        return self.launch(x, self.alpha)
