# problem: level2/76_Gemm_Add_ReLU.py
# sizes: batch_size=16,in_features=72,out_features=40
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_epilogue(x_ptr, w_ptr, b_ptr, o_ptr, M, N, K, sub, mul, HAS_BIAS: tl.constexpr, ACT: tl.constexpr,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # o = act((x @ w.T + b - sub) * mul), w of shape (N, K) as nn.Linear keeps it
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for s in range(0, K, BK):
        rk = s + tl.arange(0, BK)
        a = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * K + rk[:, None], mask=(rn[None, :] < N) & (rk[:, None] < K), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    if HAS_BIAS:
        acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    acc = (acc - sub) * mul
    if ACT == 1:
        acc = tl.maximum(acc, 0.0)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        N = self.gemm.weight.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=torch.float32)
        linear_epilogue[(triton.cdiv(M, 16), triton.cdiv(N, 16))](x, self.gemm.weight, self.bias, out, M, N, K, 0.0, 1.0,
                                                               HAS_BIAS=True, ACT=1, BM=16, BN=16, BK=32)
        return out
