# problem: level2/80_Gemm_Max_Subtract_GELU.py
# sizes: batch_size=8,in_features=40,out_features=72
# hybrid: true
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rowmax_center_gelu(y_ptr, o_ptr, N, BLOCK: tl.constexpr):
    # max over the row (keepdim), minus the mean over that singleton dim, then exact GELU
    r = tl.program_id(0)
    best = tl.full((BLOCK,), float("-inf"), tl.float32)
    for s in range(0, N, BLOCK):
        c = s + tl.arange(0, BLOCK)
        best = tl.maximum(best, tl.load(y_ptr + r * N + c, mask=c < N, other=float("-inf")))
    mx = tl.max(best, 0)
    v = mx - mx  # the mean over a dim of size 1 is the value itself
    g = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    tl.store(o_ptr + r, g)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, max_dim):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        y = self.gemm(x)
        M, N = y.shape
        out = torch.empty((M, 1), device=y.device, dtype=y.dtype)
        rowmax_center_gelu[(M,)](y, out, N, BLOCK=32)
        return out
