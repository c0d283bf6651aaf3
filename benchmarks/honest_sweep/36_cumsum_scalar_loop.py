# reference: refs/cumsum_randn_1000.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_loop(x_ptr, o_ptr, C):
    # one element at a time: the plain sequential float32 order
    r = tl.program_id(0)
    acc = 0.0
    for i in range(0, C):
        acc += tl.load(x_ptr + r * C + i)
        tl.store(o_ptr + r * C + i, acc)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        R, C = x.shape
        out = torch.empty_like(x)
        cumsum_loop[(R,)](x, out, C)
        return out
