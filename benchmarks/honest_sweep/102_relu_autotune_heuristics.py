# problem: level1/19_ReLU.py
# sizes: batch_size=7,dim=1031
import torch
import torch.nn as nn
import triton
import triton.language as tl


# Several configs, keyed on the element count; the heuristic drops the tail mask when the block divides it.
@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 256}, num_warps=2),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.heuristics({"EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})
@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if EVEN:
        x = tl.load(x_ptr + offsets)
        tl.store(y_ptr + offsets, tl.maximum(x, 0.0))
    else:
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


def triton_relu(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    relu_kernel[grid](x, y, n)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()  # noqa: UP008 (the style models write)

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return triton_relu(x)
