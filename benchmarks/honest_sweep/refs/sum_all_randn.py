import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x)


def get_inputs():
    return [torch.randn(50000)]


def get_init_inputs():
    return []
