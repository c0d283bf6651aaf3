"""Linear + {{act_name}} with scaling and a residual: y = {{formula}}."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """y = {{formula}}, W and b from nn.Linear."""

    def __init__(self, in_features: int, out_features: int, scaling: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scaling = scaling

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return {{torch_act}}(self.linear(x)) * self.scaling + residual


batch_size = 64
in_features = 33
out_features = 47
scale = 1.0
shift = 0.0


def get_inputs():
    return [torch.randn(batch_size, in_features) * scale + shift,
            torch.randn(batch_size, out_features) * scale + shift]


def get_init_inputs():
    return [in_features, out_features, {{scaling}}]
