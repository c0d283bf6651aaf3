# problem: level1/27_SELU_.py
# sizes: batch_size=6,dim=777
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def selu_kernel(x_ptr, out_ptr, n, alpha, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    neg = alpha * (tl.exp(tl.minimum(x, 0.0)) - 1.0)
    y = scale * tl.where(x > 0, x, neg)
    tl.store(out_ptr + offs, y, mask=m)


class ModelNew(nn.Module):
    """SELU with the output buffer allocated once per shape and reused by every forward."""

    def __init__(self):
        super().__init__()
        self.alpha = 1.6732632423543772848170429916717
        self.scale = 1.0507009873554804934193349852946
        self._out_cache = {}

    def _buffer(self, x):
        key = (tuple(x.shape), x.dtype, x.device)
        buf = self._out_cache.get(key)
        if buf is None:
            buf = torch.empty_like(x)
            self._out_cache[key] = buf
        return buf

    def forward(self, x):
        x = x.contiguous()
        out = self._buffer(x)
        n = x.numel()
        BLOCK = 1024
        selu_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, self.alpha, self.scale, BLOCK=BLOCK)
        return out
