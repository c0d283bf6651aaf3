# problem: level2/32_Conv2d_Scaling_Min.py
# sizes: batch_size=2,in_channels=3,out_channels=8,height=9
# hybrid: true
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_min_channels(y_ptr, o_ptr, C, HW, scale, BC: tl.constexpr, BLOCK: tl.constexpr):
    # out[n, 0, p] = min_c y[n, c, p] * scale
    n = tl.program_id(0)
    p = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    c = tl.arange(0, BC)
    m = (c[:, None] < C) & (p[None, :] < HW)
    y = tl.load(y_ptr + n * C * HW + c[:, None] * HW + p[None, :], mask=m, other=float("inf"))
    tl.store(o_ptr + n * HW + p, tl.min(y * scale, 0), mask=p < HW)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        y = self.conv(x)
        N, C, H, W = y.shape
        out = torch.empty((N, 1, H, W), device=y.device, dtype=y.dtype)
        scale_min_channels[(N, triton.cdiv(H * W, 64))](y, out, C, H * W, self.scale_factor,
                                                        BC=triton.next_power_of_2(C), BLOCK=64)
        return out
