# problem: level1/53_Min_reduction_over_a_dimension.py
# sizes: batch_size=3,dim1=70,dim2=33
import torch  # noqa: F401 (answers import it whether or not they use it)
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _min_combine(a, b):
    return tl.minimum(a, b)


@triton.jit
def min_over_mid(x_ptr, out_ptr, R, I, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    # x viewed (O, R, I): min over R with tl.reduce and a jitted combine function
    o = tl.program_id(0)
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    im = i < I
    best = tl.full((BLOCK_I,), float("inf"), tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        v = tl.load(x_ptr + o * R * I + r[:, None] * I + i[None, :], mask=(r[:, None] < R) & im[None, :],
                    other=float("inf"))
        best = tl.minimum(best, tl.reduce(v, 0, _min_combine))
    tl.store(out_ptr + o * I + i, best, mask=im)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        d = self.dim % x.dim()
        O = 1
        for s in x.shape[:d]:
            O *= s
        R = x.shape[d]
        I = x.numel() // (O * R)
        out = x.new_empty(x.shape[:d] + x.shape[d + 1:])
        min_over_mid[(O, triton.cdiv(I, 32))](x, out, R, I, BLOCK_R=16, BLOCK_I=32)
        return out
