# problem: level2/75_Gemm_GroupNorm_Min_BiasAdd.py
# sizes: batch_size=8,in_features=40,out_features=32,num_groups=4
# hybrid: true
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gn_rowmin(y_ptr, w_ptr, b_ptr, mn_ptr, N, G, eps, GS: tl.constexpr, BG: tl.constexpr):
    # per row: group norm over G groups of GS features, then the row's min
    r = tl.program_id(0)
    gi = tl.arange(0, BG)
    ci = tl.arange(0, GS)
    m = gi[:, None] < G
    idx = gi[:, None] * GS + ci[None, :]
    v = tl.load(y_ptr + r * N + idx, mask=m, other=0.0)
    mean = tl.sum(v, 1) / GS
    d = tl.where(m, v - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, 1) / GS + eps)
    z = d * rstd[:, None] * tl.load(w_ptr + idx, mask=m, other=0.0) + tl.load(b_ptr + idx, mask=m, other=0.0)
    z = tl.where(m, z, float("inf"))
    tl.store(mn_ptr + r, tl.min(tl.min(z, 1), 0))


@triton.jit
def broadcast_bias(mn_ptr, bias_ptr, o_ptr, M, N, BLOCK: tl.constexpr):
    # out has shape (1, N, M, 1): out[0, c, r, 0] = min[r] + bias[c]
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < M * N
    c, r = offs // M, offs % M
    tl.store(o_ptr + offs, tl.load(mn_ptr + r, mask=m) + tl.load(bias_ptr + c, mask=m), mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = self.gemm(x)
        M, N = y.shape
        G = self.group_norm.num_groups
        mn = torch.empty(M, device=y.device, dtype=torch.float32)
        gn_rowmin[(M,)](y, self.group_norm.weight, self.group_norm.bias, mn, N, G, self.group_norm.eps, GS=N // G,
                        BG=triton.next_power_of_2(G))
        out = torch.empty((1, N, M, 1), device=y.device, dtype=y.dtype)
        broadcast_bias[(triton.cdiv(M * N, 256),)](mn, self.bias, out, M, N, BLOCK=256)
        return out
