# problem: level1/95_CrossEntropyLoss.py
# sizes: batch_size=37,num_classes=203
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ce_rows(x_ptr, t_ptr, loss_ptr, C, BLOCK: tl.constexpr):
    # per row: online logsumexp over the classes, minus the target's logit
    r = tl.program_id(0)
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, C, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + r * C + c, mask=c < C, other=float("-inf"))
        m_new = tl.maximum(m, v)
        s = s * tl.exp(m - m_new) + tl.exp(v - m_new)
        m = tl.where(m_new == float("-inf"), m, m_new)
        s = tl.where(m_new == float("-inf"), 0.0, s)
    mx = tl.max(m, 0)
    lse = mx + tl.log(tl.sum(s * tl.exp(m - mx), 0))
    t = tl.load(t_ptr + r)
    tl.store(loss_ptr + r, lse - tl.load(x_ptr + r * C + t))


@triton.jit
def mean_kernel(v_ptr, o_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for i0 in range(0, n, BLOCK):
        i = i0 + tl.arange(0, BLOCK)
        acc += tl.load(v_ptr + i, mask=i < n, other=0.0)
    tl.store(o_ptr, tl.sum(acc, 0) / n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        x = predictions.contiguous()
        B, C = x.shape
        losses = torch.empty(B, device=x.device, dtype=torch.float32)
        ce_rows[(B,)](x, targets.contiguous(), losses, C, BLOCK=64)
        out = torch.empty((), device=x.device, dtype=torch.float32)
        mean_kernel[(1,)](losses, out, B, BLOCK=64)
        return out
