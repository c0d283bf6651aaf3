# problem: level1/30_Softsign.py
# sizes: batch_size=6,dim=901
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 512}, num_warps=4, num_stages=2, maxnreg=128),
             triton.Config({"BLOCK": 2048}, num_warps=8, num_stages=3)],
    key=["n"],
)
@triton.jit
def softsign_hinted(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # streaming data: read once bypassing L1 (.cg), evict early; write-through
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0, cache_modifier=".cg", eviction_policy="evict_first")
    y = x / (1.0 + tl.abs(x))
    tl.debug_barrier()
    tl.store(y_ptr + offs, y, mask=m, cache_modifier=".wt")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        softsign_hinted[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
        return y
