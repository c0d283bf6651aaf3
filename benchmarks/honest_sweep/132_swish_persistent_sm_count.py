# problem: level1/25_Swish.py
# sizes: batch_size=3,dim=2100
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swish_persistent(x_ptr, y_ptr, n, n_tiles, BLOCK: tl.constexpr):
    # a persistent grid: program p handles tiles p, p + P, p + 2P, ...
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    lanes = tl.arange(0, BLOCK)
    for tile in range(pid, n_tiles, nprog):
        offs = tile * BLOCK + lanes
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m, other=0.0)
        tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=m)


def _num_programs(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count * 4
    return 4


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._programs = {}

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 512
        n_tiles = triton.cdiv(n, BLOCK)
        if x.device not in self._programs:
            self._programs[x.device] = _num_programs(x.device)
        grid = (max(1, min(self._programs[x.device], n_tiles)),)
        swish_persistent[grid](x, y, n, n_tiles, BLOCK=BLOCK)
        return y
