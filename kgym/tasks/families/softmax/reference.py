"""{{title}} over dim=1 of a (batch_size, dim) tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """{{title}} of every row."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return {{torch_expr}}


batch_size = 16
dim = 257
scale = 1.0
shift = 0.0


def get_inputs():
    return [torch.randn(batch_size, dim) * scale + shift]


def get_init_inputs():
    return []
