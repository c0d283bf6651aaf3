import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over the last dimension of a half-precision input (an inference-style layer)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


batch_size = 6
dim = 777


def get_inputs():
    return [torch.randn(batch_size, dim).half()]


def get_init_inputs():
    return []
