"""{{title}} over the last dimension of a (batch_size, dim) tensor, with a learnable {{params}}."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """{{formula}}.

    The module's default init (weight 1{{bias_default}}) would let an answer that ignores the affine
    parameters pass; they are re-drawn from the seeded RNG so that they matter."""

    def __init__(self, dim: int = 255, eps: float = {{eps}}):
        super().__init__()
        self.norm = {{module}}(dim, eps=eps)
        nn.init.normal_(self.norm.weight, mean=1.0, std=0.5)
{{init_bias}}
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


batch_size = 64
dim = 255
scale = 1.0
shift = 0.0


def get_inputs():
    return [torch.randn(batch_size, dim) * scale + shift]


def get_init_inputs():
    return [dim, {{eps}}]
