# problem: level2/59_Matmul_Swish_Scaling.py
# sizes: batch_size=8,in_features=72,out_features=56
# hybrid: true
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_swish_scale(y_ptr, b_ptr, o_ptr, M, N, s, BN: tl.constexpr):
    r = tl.program_id(0)
    c = tl.program_id(1) * BN + tl.arange(0, BN)
    m = c < N
    v = tl.load(y_ptr + r * N + c, mask=m) + tl.load(b_ptr + c, mask=m)
    tl.store(o_ptr + r * N + c, v * tl.sigmoid(v) * s, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor
        # W^T stored K-major once, so the GEMM reads both operands row-major
        self.register_buffer("w_t", self.matmul.weight.detach().t().contiguous())

    def forward(self, x):
        y = torch.mm(x, self.w_t)
        M, N = y.shape
        out = torch.empty_like(y)
        bias_swish_scale[(M, triton.cdiv(N, 64))](y, self.matmul.bias, out, M, N, self.scaling_factor, BN=64)
        return out
