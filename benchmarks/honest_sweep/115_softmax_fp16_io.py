# reference: refs/softmax_fp16.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_fp16_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    # fp16 in and out, fp32 inside: 4 bytes moved per element
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + cols, y.to(tl.float16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1])
        if x2.stride(-1) != 1:
            x2 = x2.contiguous()
        y = torch.empty(x2.shape, device=x.device, dtype=torch.float16)
        n_rows, n_cols = x2.shape
        softmax_fp16_kernel[(n_rows,)](x2, y, n_cols, x2.stride(0), y.stride(0),
                                       BLOCK=triton.next_power_of_2(n_cols))
        return y.reshape(x.shape)
