# problem: level1/36_RMSNorm_.py
# sizes: batch_size=3,features=5,dim1=7,dim2=9
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, y_ptr, eps_ptr, C, S, BLOCK_S: tl.constexpr):
    # x is (B, C, S): normalise over C for each (b, s); one program per (b, block of S)
    b = tl.program_id(0).to(tl.int64)
    s_offs = tl.program_id(1) * BLOCK_S + tl.arange(0, BLOCK_S)
    smask = s_offs < S
    eps = tl.load(eps_ptr)
    base = b * C * S
    acc = tl.zeros((BLOCK_S,), tl.float32)
    for c in range(0, C):
        v = tl.load(x_ptr + base + c * S + s_offs, mask=smask, other=0.0)
        acc += v * v
    rms = tl.sqrt(acc / C + eps)
    for c in range(0, C):
        v = tl.load(x_ptr + base + c * S + s_offs, mask=smask, other=0.0)
        tl.store(y_ptr + base + c * S + s_offs, v / rms, mask=smask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        # eps as a device scalar the kernel loads (moves with .to()/.cuda() like any buffer)
        self.register_buffer("eps_buf", torch.tensor([eps], dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C = x.shape[0], x.shape[1]
        xc = x.contiguous()
        S = xc.numel() // (B * C)
        y = torch.empty_like(xc)
        BLOCK_S = 64
        rmsnorm_kernel[(B, triton.cdiv(S, BLOCK_S))](xc, y, self.eps_buf, C, S, BLOCK_S=BLOCK_S)
        return y
