# problem: level2/86_Matmul_Divide_GELU.py
# sizes: batch_size=16,input_size=72,output_size=56
# hybrid: true
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def div_gelu_inplace(y_ptr, n, inv, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(y_ptr + offs, mask=m) * inv  # divide folded into a reciprocal multiply
    tl.store(y_ptr + offs, v * 0.5 * (1.0 + tl.math.erf(v / 1.4142135623730951)), mask=m)


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x):
        y = self.linear(x)
        div_gelu_inplace[(triton.cdiv(y.numel(), 256),)](y, y.numel(), 1.0 / self.divisor, BLOCK=256)
        return y
