import torch
import torch.nn as nn


class Model(nn.Module):
    """A bfloat16 matrix product (C = A @ B), as a mixed-precision model would run it."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


M = 37
K = 80
N = 29


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16), torch.randn(K, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
