"""Linear, max over features, GELU: y = gelu(max_j (x @ W^T + b)[:, j]), shape (batch_size, 1)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.Linear, the maximum over dim=1 (kept as a column), then exact GELU."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        y = torch.max(y, dim=1, keepdim=True).values
        return torch.nn.functional.gelu(y)


batch_size = 32
in_features = 33
out_features = 65
scale = 1.0
shift = 0.0


def get_inputs():
    return [torch.randn(batch_size, in_features) * scale + shift]


def get_init_inputs():
    return [in_features, out_features]
