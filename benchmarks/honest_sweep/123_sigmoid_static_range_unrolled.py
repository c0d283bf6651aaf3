# problem: level1/21_Sigmoid.py
# sizes: batch_size=5,dim=3001
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sigmoid_unrolled(x_ptr, y_ptr, n, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    # each program handles UNROLL consecutive blocks, unrolled at compile time
    base = tl.program_id(0).to(tl.int64) * BLOCK * UNROLL
    for u in tl.static_range(UNROLL):
        offs = base + u * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m, other=0.0)
        y = 1.0 / (1.0 + tl.exp(-x))
        tl.store(y_ptr + offs, y, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.flatten()
        y = torch.empty(flat.shape, dtype=x.dtype, device=x.device)
        BLOCK, UNROLL = 256, 4
        sigmoid_unrolled[(triton.cdiv(flat.numel(), BLOCK * UNROLL),)](flat, y, flat.numel(), BLOCK=BLOCK,
                                                                       UNROLL=UNROLL)
        return y.reshape(x.shape)
