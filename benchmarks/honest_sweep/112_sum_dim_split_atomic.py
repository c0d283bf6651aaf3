# problem: level1/47_Sum_reduction_over_a_dimension.py
# sizes: batch_size=3,dim1=300,dim2=37
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_mid_split_kernel(x_ptr, out_ptr, R, I, SPLIT: tl.constexpr, BLOCK_R: tl.constexpr,
                         BLOCK_I: tl.constexpr):
    # x viewed (O, R, I), reduced over R; the R axis is split SPLIT ways and partials meet by atomic add
    o = tl.program_id(0).to(tl.int64)
    pi = tl.program_id(1)
    ps = tl.program_id(2)
    i = pi * BLOCK_I + tl.arange(0, BLOCK_I)
    imask = i < I
    per = tl.cdiv(R, SPLIT)
    r0 = ps * per
    acc = tl.zeros((BLOCK_I,), tl.float32)
    for r in range(r0, r0 + per, BLOCK_R):
        rr = r + tl.arange(0, BLOCK_R)
        rmask = (rr < R) & (rr < r0 + per)
        v = tl.load(x_ptr + o * R * I + rr[:, None] * I + i[None, :], mask=rmask[:, None] & imask[None, :],
                    other=0.0)
        acc += tl.sum(v, axis=0)
    tl.atomic_add(out_ptr + o * I + i, acc, mask=imask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        shape = list(x.shape)
        d = self.dim % x.dim()
        O = 1
        for s in shape[:d]:
            O *= s
        R = shape[d]
        I = x.numel() // (O * R)
        out_shape = shape[:d] + [1] + shape[d + 1:]
        out = torch.zeros(out_shape, device=x.device, dtype=torch.float32)
        BLOCK_I = 32
        SPLIT = 4
        grid = (O, triton.cdiv(I, BLOCK_I), SPLIT)
        sum_mid_split_kernel[grid](x, out, R, I, SPLIT=SPLIT, BLOCK_R=16, BLOCK_I=BLOCK_I)
        return out
