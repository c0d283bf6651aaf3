# problem: level2/52_Conv2d_Activation_BatchNorm.py
# sizes: batch_size=3,in_channels=3,out_channels=5,height=(9, 11)
# hybrid: true
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def bias_act_stats(y_ptr, b_ptr, a_ptr, sum_ptr, sq_ptr, N, C, HW, BLOCK: tl.constexpr):
    # one program per channel: a = tanh(softplus(y + b)) * (y + b) written out, and the channel's
    # sum and sum of squared deviations (two passes over the channel, batch statistics as in training)
    c = tl.program_id(0)
    b = tl.load(b_ptr + c)
    total = N * HW
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, total, BLOCK):
        i = s + tl.arange(0, BLOCK)
        m = i < total
        off = (i // HW) * C * HW + c * HW + i % HW
        v = tl.load(y_ptr + off, mask=m, other=0.0) + b
        # softplus = log1p(exp(v)), log1p by Kahan's trick: log(1 + e) loses e's digits below -9 and
        # BatchNorm over a channel of near-zero variance multiplies that error by 1/sqrt(eps)
        ex = tl.exp(v)
        u = 1.0 + ex
        sp = tl.where(v > 20.0, v, tl.where(u == 1.0, ex, tl.log(u) * ex / (u - 1.0)))
        e = tl.exp(-2.0 * sp)
        a = v * (1.0 - e) / (1.0 + e)
        tl.store(a_ptr + off, a, mask=m)
        acc += tl.where(m, a, 0.0)
    mean = tl.sum(acc, 0) / total
    acc2 = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, total, BLOCK):
        i = s + tl.arange(0, BLOCK)
        m = i < total
        off = (i // HW) * C * HW + c * HW + i % HW
        d = tl.where(m, tl.load(a_ptr + off, mask=m, other=0.0) - mean, 0.0)
        acc2 += d * d
    tl.store(sum_ptr + c, mean)
    tl.store(sq_ptr + c, tl.sum(acc2, 0) / total)


@triton.jit
def bn_apply(a_ptr, mean_ptr, var_ptr, w_ptr, bb_ptr, o_ptr, C, HW, n, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    c = (offs // HW) % C
    a = tl.load(a_ptr + offs, mask=m)
    mean = tl.load(mean_ptr + c, mask=m)
    var = tl.load(var_ptr + c, mask=m)
    w = tl.load(w_ptr + c, mask=m)
    bb = tl.load(bb_ptr + c, mask=m)
    tl.store(o_ptr + offs, (a - mean) / tl.sqrt(var + eps) * w + bb, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, eps=1e-5, momentum=0.1):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bn = nn.BatchNorm2d(out_channels, eps=eps, momentum=momentum)

    def forward(self, x):
        # conv without its bias (cuDNN); the bias goes into the Triton epilogue
        y = F.conv2d(x, self.conv.weight)
        N, C, H, W = y.shape
        a = torch.empty_like(y)
        mean = torch.empty(C, device=y.device, dtype=torch.float32)
        var = torch.empty(C, device=y.device, dtype=torch.float32)
        bias_act_stats[(C,)](y, self.conv.bias, a, mean, var, N, C, H * W, BLOCK=128)
        out = torch.empty_like(y)
        n = y.numel()
        bn_apply[(triton.cdiv(n, 256),)](a, mean, var, self.bn.weight, self.bn.bias, out, C, H * W, n, self.bn.eps,
                                        BLOCK=256)
        return out
