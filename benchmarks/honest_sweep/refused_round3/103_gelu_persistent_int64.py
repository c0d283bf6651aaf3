# problem: level1/26_GELU_.py
# sizes: batch_size=5,dim=2053
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_PROGRAMS = 8  # a persistent grid: a fixed number of programs walks every tile


@triton.jit
def gelu_persistent(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    # bytes moved: 8 per element; erf GELU in fp32, exact like torch's default approximate='none'
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    n_tiles = tl.cdiv(n_elements, BLOCK)
    for tile in range(pid, n_tiles, nprog):
        start = tile.to(tl.int64) * BLOCK  # int64 so huge tensors do not overflow the offset
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_elements
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
        tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = 512
        self.inv_sqrt2 = 1.0 / math.sqrt(2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        out = torch.empty_like(xc)
        n = xc.numel()
        grid = (min(NUM_PROGRAMS, triton.cdiv(n, self.block)),)
        gelu_persistent[grid](xc, out, n, BLOCK=self.block)
        return out.view(x.shape)
