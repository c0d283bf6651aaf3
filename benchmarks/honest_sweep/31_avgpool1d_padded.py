# problem: level1/44_Average_Pooling_1D.py
# sizes: batch_size=2,in_channels=3,input_length=100
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def avgpool1d(x_ptr, o_ptr, L, LOUT, K: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr, BLOCK: tl.constexpr):
    # count_include_pad (AvgPool1d's default): the padded zeros count, the divisor is always K
    row = tl.program_id(0)
    o = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for k in tl.static_range(K):
        pos = o * STRIDE - PAD + k
        acc += tl.load(x_ptr + row * L + pos, mask=(pos >= 0) & (pos < L) & (o < LOUT), other=0.0)
    tl.store(o_ptr + row * LOUT + o, acc / K, mask=o < LOUT)


class ModelNew(nn.Module):
    def __init__(self, kernel_size, stride=1, padding=0):
        super().__init__()
        self.avg_pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        x = x.contiguous()
        N, C, L = x.shape
        k, s, p = self.avg_pool.kernel_size[0], self.avg_pool.stride[0], self.avg_pool.padding[0]
        lout = (L + 2 * p - k) // s + 1
        out = torch.empty((N, C, lout), device=x.device, dtype=x.dtype)
        avgpool1d[(N * C, triton.cdiv(lout, 64))](x, out, L, lout, K=k, STRIDE=s, PAD=p, BLOCK=64)
        return out
