"""2-D {{title}} of an (N, C, H, W) tensor: square window, stride and padding from the init inputs."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """{{title}}, {{semantics}}."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = {{torch_module}}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch_size = 4
channels = 3
height = 31
width = 33
kernel_size = 3
stride = 2
scale = 1.0
shift = 0.0


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * scale + shift]


def get_init_inputs():
    return [kernel_size, stride, {{padding}}]
