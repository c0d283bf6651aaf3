"""Bundled example for `kgym verify --example relu`: the reference, in KernelBench form."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise ReLU."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    # 257 * 255 = 65535 elements: not a multiple of any power of two block.
    return [torch.randn(257, 255)]


def get_init_inputs():
    return []
