# problem: level1/28_HardSigmoid.py
# sizes: batch_size=6,dim=700
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hardsigmoid_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    y = tl.minimum(tl.maximum(x / 6.0 + 0.5, 0.0), 1.0)
    tl.store(y_ptr + offs, y, mask=m)


def hardsigmoid_out(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """Writes hardsigmoid(x) into the caller's preallocated, contiguous `out`."""
    n = x.numel()
    hardsigmoid_kernel[(triton.cdiv(n, 512),)](x, out, n, BLOCK=512)
    return out


class ModelNew(nn.Module):
    """Processes the batch in chunks of rows (bounded scratch), then joins the chunks."""

    def __init__(self):
        super().__init__()
        self.rows_per_chunk = 4

    def forward(self, x):
        x = x.contiguous()
        parts = []
        for chunk in torch.split(x, self.rows_per_chunk, dim=0):
            c = chunk.contiguous()
            parts.append(hardsigmoid_out(c, torch.empty_like(c)))
        return torch.cat(parts, dim=0)
