"""Conv2d ({{conv_kind}}), ReLU, then a learnable per-channel bias: y = relu(conv(x)) + bias."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """A 2-D convolution ({{conv_kind}}), ReLU, and an extra bias of shape (out_channels, 1, 1)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, bias_shape: tuple):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias={{conv_bias}})
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.relu(x)
        return x + self.bias


batch_size = 2
in_channels = 3
out_channels = 16
height = 17
width = 15
kernel_size = 3
scale = 1.0
shift = 0.0


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width) * scale + shift]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, (out_channels, 1, 1)]
