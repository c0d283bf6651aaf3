"""{{title}}: {{formula}} of a (batch_size, dim) tensor, the reduced axis dropped (keepdim=False)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """{{title}} over dimension `reduce_dim` of a 2-D input."""

    def __init__(self, reduce_dim: int = {{axis}}):
        super().__init__()
        self.reduce_dim = reduce_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return {{torch_expr}}


batch_size = 64
dim = 255
scale = 1.0
shift = 0.0


def get_inputs():
    return [torch.randn(batch_size, dim) * scale + shift]


def get_init_inputs():
    return [{{axis}}]
