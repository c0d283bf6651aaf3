# problem: level2/14_Gemm_Divide_Sum_Scaling.py
# sizes: batch_size=16,input_size=72,hidden_size=40
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def col_sum(w_ptr, ws_ptr, H, K, BH: tl.constexpr, BK: tl.constexpr):
    # sum over the hidden rows of W (H, K): sum_j (x W^T)_ij = x . sum_j W_j
    k = tl.program_id(0) * BK + tl.arange(0, BK)
    acc = tl.zeros((BK,), tl.float32)
    for s in range(0, H, BH):
        h = s + tl.arange(0, BH)
        acc += tl.sum(tl.load(w_ptr + h[:, None] * K + k[None, :], mask=(h[:, None] < H) & (k[None, :] < K), other=0.0), 0)
    tl.store(ws_ptr + k, acc, mask=k < K)


@triton.jit
def gemv_scale(x_ptr, ws_ptr, o_ptr, K, scale, BK: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros((BK,), tl.float32)
    for s in range(0, K, BK):
        k = s + tl.arange(0, BK)
        acc += tl.load(x_ptr + r * K + k, mask=k < K, other=0.0) * tl.load(ws_ptr + k, mask=k < K, other=0.0)
    tl.store(o_ptr + r, tl.sum(acc, 0) * 0.5 * scale)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        H = self.weight.shape[0]
        ws = torch.empty(K, device=x.device, dtype=torch.float32)
        col_sum[(triton.cdiv(K, 32),)](self.weight, ws, H, K, BH=16, BK=32)
        out = torch.empty((M, 1), device=x.device, dtype=torch.float32)
        gemv_scale[(M,)](x, ws, out, K, self.scaling_factor, BK=32)
        return out
