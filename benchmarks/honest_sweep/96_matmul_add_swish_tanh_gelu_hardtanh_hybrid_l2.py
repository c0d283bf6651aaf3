# problem: level2/95_Matmul_Add_Swish_Tanh_GELU_Hardtanh.py
# sizes: batch_size=16,in_features=64,out_features=48
# hybrid: true
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def chain_kernel(y_ptr, a_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(y_ptr + rm[:, None] * N + rn[None, :], mask=m, other=0.0)
    v = v + tl.load(a_ptr + rn, mask=rn < N, other=0.0)[None, :]
    v = tl.sigmoid(v) * v
    e = tl.exp(-2.0 * tl.abs(v))
    v = tl.where(v >= 0, (1.0 - e) / (1.0 + e), (e - 1.0) / (1.0 + e))
    v = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    v = tl.minimum(tl.maximum(v, -1.0), 1.0)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], v, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, add_value_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.add_value = nn.Parameter(torch.randn(add_value_shape))

    def forward(self, x):
        y = self.matmul(x)
        M, N = y.shape
        out = torch.empty_like(y)
        chain_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 32))](y, self.add_value, out, M, N, BM=16, BN=32)
        return out
