"""Fused {{title}}: {{formula}} of two (batch_size, dim) tensors."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """{{title}}: two inputs, one output, no parameters."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return {{torch_expr}}


batch_size = 16
dim = 257
scale = 1.0
shift = 0.0


def get_inputs():
    a = torch.randn(batch_size, dim) * scale + shift
    b = torch.randn(batch_size, dim) * scale + shift
    return [a, b]


def get_init_inputs():
    return []
