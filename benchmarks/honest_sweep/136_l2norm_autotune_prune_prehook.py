# problem: level1/39_L2Norm_.py
# sizes: batch_size=5,dim=1500
import torch
import torch.nn as nn
import triton
import triton.language as tl


def prune_configs(configs, named_args, **kwargs):
    # drop blocks far wider than the row
    n = named_args["N"]
    kept = [c for c in configs if c.kwargs["BLOCK"] <= max(256, triton.next_power_of_2(n))]
    return kept or configs[:1]


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((256, 2), (1024, 4), (8192, 8))],
    key=["N"],
    prune_configs_by={"early_config_prune": prune_configs},
)
@triton.jit
def l2norm_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, N, BLOCK):
        c = s + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * N + c, mask=c < N, other=0.0)
        acc += v * v
    norm = tl.sqrt(tl.sum(acc, axis=0))
    for s in range(0, N, BLOCK):
        c = s + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * N + c, mask=c < N, other=0.0)
        tl.store(y_ptr + row * N + c, v / norm, mask=c < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        l2norm_kernel[(x.shape[0],)](x, y, x.shape[1])
        return y
