"""Conv2d ({{conv_kind}}) + ReLU + per-channel bias, hybrid: the convolution is the one library call
(cuDNN), ReLU and the bias are one Triton pass over its output.

The conv output is (N, C, H', W'): each (n, c) plane is H'*W' contiguous values sharing one bias, so
a program takes a [BLOCK_P planes, BLOCK_HW positions] tile and loads BLOCK_P biases, not one per
element. Bytes: 8 per output (read the conv result, write y) + 4*C; no reuse, bandwidth-bound."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_bias_kernel(y_ptr, bias_ptr, out_ptr, planes, C, HW, BLOCK_P: tl.constexpr, BLOCK_HW: tl.constexpr):
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)  # plane index n * C + c
    s = tl.program_id(1) * BLOCK_HW + tl.arange(0, BLOCK_HW)  # position inside the plane
    mask = (p[:, None] < planes) & (s[None, :] < HW)
    offs = p[:, None] * HW + s[None, :]
    # kgym-scaffold: begin the tail: out = ReLU of the conv result, then the channel's bias added
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    b = tl.load(bias_ptr + p % C, mask=p < planes, other=0.0)
    out = {{tail}}
    # kgym-scaffold: end
    tl.store(out_ptr + offs, out, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, bias_shape: tuple):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias={{conv_bias}})
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)  # the one library call
        N, C, H, W = y.shape
        out = torch.empty_like(y)
        # tiles of 4096 outputs: up to 1024 positions of a plane, as many planes as fill the rest
        BLOCK_HW = min(triton.next_power_of_2(H * W), 1024)
        BLOCK_P = 4096 // BLOCK_HW
        grid = (triton.cdiv(N * C, BLOCK_P), triton.cdiv(H * W, BLOCK_HW))
        relu_bias_kernel[grid](y, self.bias, out, N * C, C, H * W, BLOCK_P=BLOCK_P, BLOCK_HW=BLOCK_HW,
                               num_warps=8)
        return out
