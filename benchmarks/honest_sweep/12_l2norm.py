# problem: level1/39_L2Norm_.py
# sizes: batch_size=6,dim=3000
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def l2norm(x_ptr, o_ptr, D, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + r * D + c, mask=c < D, other=0.0)
        acc += x * x
    inv = 1.0 / tl.sqrt(tl.sum(acc, 0))
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + r * D + c, mask=c < D, other=0.0)
        tl.store(o_ptr + r * D + c, x * inv, mask=c < D)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        R, D = x.shape
        out = torch.empty_like(x)
        l2norm[(R,)](x, out, D, BLOCK=1024)
        return out
