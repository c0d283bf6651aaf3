# problem: level2/62_Matmul_GroupNorm_LeakyReLU_Sum.py
# sizes: batch_size=12,input_size=40,hidden_size=48,num_groups=6
# hybrid: true
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def group_stats(y_ptr, b_ptr, ws_ptr, N, G, GS: tl.constexpr):
    # program per (row, group): mean and rstd of (y + b) over the group's GS features, into a workspace
    r, g = tl.program_id(0), tl.program_id(1)
    c = g * GS + tl.arange(0, GS)
    v = tl.load(y_ptr + r * N + c) + tl.load(b_ptr + c)
    mean = tl.sum(v, 0) / GS
    d = v - mean
    tl.store(ws_ptr + (r * G + g) * 2, mean)
    tl.store(ws_ptr + (r * G + g) * 2 + 1, tl.sum(d * d, 0) / GS)


@triton.jit
def norm_leaky_double(y_ptr, b_ptr, ws_ptr, w_ptr, gb_ptr, o_ptr, M, N, G, GS, eps, slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < M * N
    r, c = offs // N, offs % N
    g = c // GS
    mean = tl.load(ws_ptr + (r * G + g) * 2, mask=m, other=0.0)
    var = tl.load(ws_ptr + (r * G + g) * 2 + 1, mask=m, other=1.0)
    v = tl.load(y_ptr + offs, mask=m, other=0.0) + tl.load(b_ptr + c, mask=m, other=0.0)
    z = (v - mean) / tl.sqrt(var + eps) * tl.load(w_ptr + c, mask=m, other=0.0) + tl.load(gb_ptr + c, mask=m, other=0.0)
    z = tl.where(z > 0, z, z * slope)
    tl.store(o_ptr + offs, z + z, mask=m)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups, eps=1e-5, negative_slope=0.01):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=hidden_size, eps=eps)
        self.negative_slope = negative_slope
        self._ws = None  # (mean, var) per row and group, allocated once and rewritten every forward

    def forward(self, x):
        y = x @ self.fc.weight.T  # the GEMM alone; its bias goes into the Triton kernels
        M, N = y.shape
        G = self.gn.num_groups
        if self._ws is None or self._ws.numel() != M * G * 2 or self._ws.device != y.device:
            self._ws = torch.empty(M * G * 2, device=y.device, dtype=torch.float32)
        group_stats[(M, G)](y, self.fc.bias, self._ws, N, G, GS=N // G)
        out = torch.empty_like(y)
        norm_leaky_double[(triton.cdiv(M * N, 256),)](y, self.fc.bias, self._ws, self.gn.weight, self.gn.bias, out, M,
                                                     N, G, N // G, self.gn.eps, self.negative_slope, BLOCK=256)
        return out
