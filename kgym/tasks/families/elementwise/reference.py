"""Elementwise {{title}}: {{formula}}."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies {{title}} to every element."""

    def __init__({{init_args}}):
        super().__init__()
{{init_body}}
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return {{torch_expr}}


batch_size = 16
dim = 255
scale = 1.0
shift = 0.0


def get_inputs():
    return [torch.randn(batch_size, dim) * scale + shift]


def get_init_inputs():
    return [{{init_values}}]
