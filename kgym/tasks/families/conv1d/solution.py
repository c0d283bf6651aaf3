"""Depthwise conv1d + bias + {{title}} in Triton. The (batch, channels, length) output is flattened and
each program computes BLOCK consecutive outputs, looping over the K taps: no lanes wasted on short rows,
and row boundaries are handled by masks on the position within the row.
Bytes moved: 8 per output element (x read once from DRAM, the K-tap halo and the filter taps come from
L1/L2; y written once). FLOPs: 2*K per output element, so the kernel is bandwidth-bound."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def depthwise_conv1d_kernel(x_ptr, w_ptr, b_ptr, out_ptr, C, L, total,
                            K: tl.constexpr, PAD: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    row = offs // L  # n * C + c
    pos0 = offs - row * L  # the output position within its row
    c = row % C
    x_row = x_ptr + row * L
    # kgym-scaffold: begin the K-tap loop over x_row (cross-correlation, zero padding by masks), then the bias
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k in tl.static_range(K):
        pos = {{tap_pos}}
        xv = tl.load(x_row + pos, mask=mask & (pos >= 0) & (pos < L), other=0.0)
        acc += xv * tl.load(w_ptr + c * K + {{w_tap}}, mask=mask, other=0.0)
    acc += tl.load(b_ptr + c, mask=mask, other=0.0)
    # kgym-scaffold: end
    y = {{triton_epilogue}}
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        # The same module as the reference, so the seed gives the same weight (C, 1, K) and bias (C,).
        self.conv = nn.Conv1d(channels, channels, kernel_size, padding=kernel_size // 2, groups=channels,
                              bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n, c, length = x.shape
        out = torch.empty_like(x)
        total = x.numel()
        # Triton's CPU interpreter pays per program, not per element: there, a few large blocks.
        BLOCK = 1024 if x.is_cuda else 8192
        grid = (triton.cdiv(total, BLOCK),)
        depthwise_conv1d_kernel[grid](x, self.conv.weight.contiguous(), self.conv.bias, out, c, length, total,
                                      K=self.conv.kernel_size[0], PAD=self.conv.padding[0], BLOCK=BLOCK)
        return out
