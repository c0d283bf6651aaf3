"""A linear layer as the whole model: y = x @ W^T + b (nn.Linear)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """One nn.Linear: weight (out_features, in_features) and a bias."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


batch_size = 33
in_features = 31
out_features = 17
scale = 1.0
shift = 0.0


def get_inputs():
    return [torch.randn(batch_size, in_features) * scale + shift]


def get_init_inputs():
    return [in_features, out_features]
