"""2-D convolution ({{title}}): nn.Conv2d with a bias on an NCHW tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """One nn.Conv2d: kernel_size x kernel_size filters, the given stride, zero padding and groups, and a
    bias per output channel."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int,
                 groups: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                              groups=groups, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 2
in_channels = 3
out_channels = 8
height = 17
width = 15
kernel_size = {{kernel_size}}
stride = {{stride}}
padding = {{padding}}
groups = {{groups}}
scale = 1.0
shift = 0.0


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width) * scale + shift]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups]
