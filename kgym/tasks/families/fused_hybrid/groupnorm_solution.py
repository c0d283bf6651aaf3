"""Linear + GroupNorm + ReLU, hybrid: the linear layer is the one library call (cuBLAS addmm),
GroupNorm's statistics, its affine map and the ReLU are one Triton kernel.

A program normalises one group of channels (GS = out_features / num_groups contiguous values) in
BLOCK_R rows at once, with the group's values held in registers: one read and one write per value,
so 8 bytes per output plus the affine parameters. Statistics are two-pass (mean, then the mean of
squared deviations): a one-pass E[z^2] - E[z]^2 cancels catastrophically for shifted inputs."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def groupnorm_relu_kernel(z_ptr, gamma_ptr, beta_ptr, out_ptr, M, C, GS, eps,
                          BLOCK_R: tl.constexpr, BLOCK_G: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * GS + tl.arange(0, BLOCK_G)  # this group's channels
    col_ok = tl.arange(0, BLOCK_G) < GS
    mask = (rows[:, None] < M) & col_ok[None, :]
    offs = rows[:, None] * C + cols[None, :]
    z = tl.load(z_ptr + offs, mask=mask, other=0.0)
    # kgym-scaffold: begin GroupNorm over each row's group (biased variance, eps), the affine map, then ReLU
    mean = tl.sum(z, axis=1) / GS
    d = tl.where(mask, z - mean[:, None], 0.0)
    var = tl.sum(d * d, axis=1) / {{var_divisor}}
    rstd = 1.0 / tl.sqrt(var + eps)
    gamma = tl.load(gamma_ptr + cols, mask=col_ok, other=0.0)
    beta = tl.load(beta_ptr + cols, mask=col_ok, other=0.0)
    out = tl.maximum(d * rstd[:, None] * gamma[None, :] + beta[None, :], 0.0)
    # kgym-scaffold: end
    tl.store(out_ptr + offs, out, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, num_groups: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        nn.init.normal_(self.group_norm.weight, 1.0, 0.5)
        nn.init.normal_(self.group_norm.bias, 0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = F.linear(x, self.linear.weight, self.linear.bias)  # the one library call (addmm)
        M, C = z.shape
        G = self.group_norm.num_groups
        GS = C // G
        out = torch.empty_like(z)
        # a tile of up to 4096 values: the group's channels across as many rows as fill it
        BLOCK_G = triton.next_power_of_2(GS)
        BLOCK_R = min(max(1, 4096 // BLOCK_G), triton.next_power_of_2(M))
        grid = (triton.cdiv(M, BLOCK_R), G)
        groupnorm_relu_kernel[grid](z, self.group_norm.weight, self.group_norm.bias, out, M, C, GS,
                                    self.group_norm.eps, BLOCK_R=BLOCK_R, BLOCK_G=BLOCK_G, num_warps=4)
        return out
