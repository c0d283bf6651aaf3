# problem: level1/36_RMSNorm_.py
# sizes: batch_size=2,features=13,dim1=9,dim2=10
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rms_channels(x_ptr, o_ptr, C, HW, eps, BC: tl.constexpr, BP: tl.constexpr):
    # mean of squares over the channel dim (stride HW) for a block of BP pixels of one sample
    n = tl.program_id(0)
    p = tl.program_id(1) * BP + tl.arange(0, BP)
    c = tl.arange(0, BC)
    m = (c[:, None] < C) & (p[None, :] < HW)
    x = tl.load(x_ptr + n * C * HW + c[:, None] * HW + p[None, :], mask=m, other=0.0)
    rms = tl.sqrt(tl.sum(x * x, 0) / C + eps)
    tl.store(o_ptr + n * C * HW + c[:, None] * HW + p[None, :], x / rms[None, :], mask=m)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x):
        x = x.contiguous()
        N, C = x.shape[0], x.shape[1]
        HW = x.numel() // (N * C)
        out = torch.empty_like(x)
        rms_channels[(N, triton.cdiv(HW, 32))](x, out, C, HW, self.eps, BC=triton.next_power_of_2(C), BP=32)
        return out
