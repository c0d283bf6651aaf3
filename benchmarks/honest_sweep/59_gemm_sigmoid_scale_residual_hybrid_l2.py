# problem: level2/70_Gemm_Sigmoid_Scaling_ResidualAdd.py
# sizes: batch_size=16,input_size=64,hidden_size=48
# hybrid: true
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sig_scale_res_inplace(y_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    y = tl.load(y_ptr + offs, mask=m)
    sig = 1.0 / (1.0 + tl.exp(-y))
    tl.store(y_ptr + offs, sig * s + y, mask=m)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.gemm = nn.Linear(input_size, hidden_size)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        y = self.gemm(x)
        n = y.numel()
        sig_scale_res_inplace[(triton.cdiv(n, 128),)](y, n, self.scaling_factor, BLOCK=128)
        return y
