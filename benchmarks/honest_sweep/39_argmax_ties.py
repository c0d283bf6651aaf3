# reference: refs/argmax_ties.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def argmax_rows(x_ptr, o_ptr, D, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + r * D + c, mask=c < D, other=-float("inf"))
    tl.store(o_ptr + r, tl.argmax(x, 0).to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        R, D = x.shape
        out = torch.empty((R,), device=x.device, dtype=torch.int64)
        argmax_rows[(R,)](x, out, D, BLOCK=triton.next_power_of_2(D))
        return out
