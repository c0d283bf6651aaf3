# problem: level2/40_Matmul_Scaling_ResidualAdd.py
# sizes: batch_size=7,in_features=33,out_features=45
# hybrid: true
import torch  # noqa: F401 (answers import it whether or not they use it)
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 128}, num_warps=2), triton.Config({"BLOCK": 512}, num_warps=4)],
    key=["n_elements"],
    restore_value=["y_ptr"],  # the kernel works in place: every trial config starts from the GEMM's output
)
@triton.heuristics({"NEEDS_MASK": lambda a: a["n_elements"] % a["BLOCK"] != 0})
@triton.jit
def scale_residual_inplace(y_ptr, n_elements, scale, BLOCK: tl.constexpr, NEEDS_MASK: tl.constexpr):
    # y <- y * scale + y, in place on the GEMM's fresh output (same rounding order as the reference)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if NEEDS_MASK:
        m = offs < n_elements
        y = tl.load(y_ptr + offs, mask=m)
        tl.store(y_ptr + offs, y * scale + y, mask=m)
    else:
        y = tl.load(y_ptr + offs)
        tl.store(y_ptr + offs, y * scale + y)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        y = self.matmul(x)  # the one library call (cuBLAS addmm)
        n = y.numel()
        scale_residual_inplace[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](y, n, self.scaling_factor)
        return y
