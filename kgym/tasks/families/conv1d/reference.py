"""Depthwise conv1d with bias, then {{title}}: {{formula}}."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """A depthwise Conv1d (one filter per channel, groups=channels) with 'same' padding and a bias,
    followed by {{title}}."""

    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size, padding=kernel_size // 2, groups=channels,
                              bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return {{torch_expr}}


batch_size = 2
channels = 5
length = 127
kernel_size = 5
scale = 1.0
shift = 0.0


def get_inputs():
    return [torch.randn(batch_size, channels, length) * scale + shift]


def get_init_inputs():
    return [channels, kernel_size]
