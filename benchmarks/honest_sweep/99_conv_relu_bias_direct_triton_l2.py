# problem: level2/1_Conv2D_ReLU_BiasAdd.py
# sizes: batch_size=2,in_channels=3,out_channels=8,height=9
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv_relu_bias(x_ptr, w_ptr, cb_ptr, b_ptr, y_ptr, CI, H, W, CO, OH, OW, KS: tl.constexpr,
                   BCO: tl.constexpr, BP: tl.constexpr):
    # direct convolution (stride 1, no padding) as an implicit GEMM: a tile of output channels x output
    # pixels of one image, accumulated over (ci, kh, kw) in fp32; then + conv bias, ReLU, + extra bias
    n = tl.program_id(2)
    co = tl.program_id(0) * BCO + tl.arange(0, BCO)
    p = tl.program_id(1) * BP + tl.arange(0, BP)
    com = co < CO
    pm = p < OH * OW
    oh, ow = p // OW, p % OW
    acc = tl.zeros((BCO, BP), tl.float32)
    for ci in range(0, CI):
        for kh in tl.static_range(KS):
            for kw in tl.static_range(KS):
                xv = tl.load(x_ptr + ((n * CI + ci) * H + oh + kh) * W + ow + kw, mask=pm, other=0.0)
                wv = tl.load(w_ptr + ((co * CI + ci) * KS + kh) * KS + kw, mask=com, other=0.0)
                acc += wv[:, None] * xv[None, :]
    acc += tl.load(cb_ptr + co, mask=com, other=0.0)[:, None]
    acc = tl.maximum(acc, 0.0) + tl.load(b_ptr + co, mask=com, other=0.0)[:, None]
    tl.store(y_ptr + (n * CO + co[:, None]) * OH * OW + p[None, :], acc, mask=com[:, None] & pm[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = x.contiguous()
        N, CI, H, W = x.shape
        CO, _, KS, _ = self.conv.weight.shape
        OH, OW = H - KS + 1, W - KS + 1
        y = torch.empty((N, CO, OH, OW), device=x.device, dtype=x.dtype)
        conv_relu_bias[(triton.cdiv(CO, 8), triton.cdiv(OH * OW, 32), N)](x, self.conv.weight, self.conv.bias,
                                                                          self.bias, y, CI, H, W, CO, OH, OW,
                                                                          KS=KS, BCO=8, BP=32)
        return y
