# problem: level1/45_Average_Pooling_2D.py
# sizes: batch_size=2,channels=3,height=25,width=27,kernel_size=5
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def avgpool2d_kernel(x_ptr, y_ptr, H, W, OH, OW, KS: tl.constexpr, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    # no padding (count_include_pad is moot): each window is KS x KS in bounds
    plane = tl.program_id(0)
    o = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    om = o < OH * OW
    oh, ow = o // OW, o % OW
    acc = tl.zeros((BLOCK,), tl.float32)
    for kh in range(KS):
        for kw in range(KS):
            acc += tl.load(x_ptr + plane * H * W + (oh * STRIDE + kh) * W + ow * STRIDE + kw, mask=om, other=0.0)
    tl.store(y_ptr + plane * OH * OW + o, acc * (1.0 / (KS * KS)), mask=om)


class ModelNew(nn.Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.avg_pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        k = self.avg_pool.kernel_size
        s = self.avg_pool.stride
        OH, OW = (H - k) // s + 1, (W - k) // s + 1
        y = torch.empty((N, C, OH, OW), device=x.device, dtype=x.dtype)
        avgpool2d_kernel[(N * C, triton.cdiv(OH * OW, 64))](x, y, H, W, OH, OW, KS=k, STRIDE=s, BLOCK=64)
        return y
