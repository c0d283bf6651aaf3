"""{{title}}: torch.cumsum over dimension {{axis}} of a (batch_size, dim) tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Inclusive cumulative sum along dimension `scan_dim` of a 2-D input."""

    def __init__(self, scan_dim: int = {{axis}}):
        super().__init__()
        self.scan_dim = scan_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=self.scan_dim)


batch_size = 64
dim = 255
scale = 1.0
shift = 0.0


def get_inputs():
    return [torch.randn(batch_size, dim) * scale + shift]


def get_init_inputs():
    return [{{axis}}]
