"""Linear, GroupNorm, ReLU: y = relu(group_norm(x @ W^T + b))."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.Linear, then nn.GroupNorm over its out_features channels, then ReLU."""

    def __init__(self, in_features: int, out_features: int, num_groups: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        # affine parameters away from their (1, 0) init, so that a dropped weight or bias shows
        nn.init.normal_(self.group_norm.weight, 1.0, 0.5)
        nn.init.normal_(self.group_norm.bias, 0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.group_norm(self.linear(x)))


batch_size = 32
in_features = 33
out_features = 60
num_groups = 4
scale = 1.0
shift = 0.0


def get_inputs():
    return [torch.randn(batch_size, in_features) * scale + shift]


def get_init_inputs():
    return [in_features, out_features, num_groups]
