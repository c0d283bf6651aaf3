# problem: level2/28_BMM_InstanceNorm_Sum_ResidualAdd_Multiply.py
# sizes: batch_size=8,in_features=40,out_features=56
# hybrid: true
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def rownorm_residual(h_ptr, y_ptr, o_ptr, N, eps, BLOCK: tl.constexpr):
    # the instance norm of a (B, 1, 1, N) view normalises each row over its N features;
    # then (z + y) * y
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < N
    h = tl.load(h_ptr + r * N + c, mask=m, other=0.0)
    mean = tl.sum(h, 0) / N
    d = tl.where(m, h - mean, 0.0)
    var = tl.sum(d * d, 0) / N
    z = d * tl.math.rsqrt(var + eps)
    y = tl.load(y_ptr + r * N + c, mask=m, other=0.0)
    tl.store(o_ptr + r * N + c, (z + y) * y, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.bmm = nn.Linear(in_features, out_features)
        self.instance_norm = nn.InstanceNorm2d(out_features, eps=eps, momentum=momentum)

    def forward(self, x, y):
        h = F.linear(x, self.bmm.weight, self.bmm.bias)
        M, N = h.shape
        out = torch.empty_like(h)
        rownorm_residual[(M,)](h, y.contiguous(), out, N, self.instance_norm.eps, BLOCK=triton.next_power_of_2(N))
        return out
