"""FP32 means FP32: TensorFloat-32 off for cuBLAS and cuDNN in the parent and the candidate's process.

PyTorch leaves `torch.backends.cudnn.allow_tf32` on by default, so an eager convolution on an
Ampere-or-later GPU rounds its inputs to 10-bit mantissas: a reference computed that way is off by
~1e-3 relative, and an honest IEEE-precision Triton convolution would fail gate 4's 1e-4 against
it. The verifier therefore computes references, baselines and hybrid library calls in true FP32.
(A hybrid candidate that turns TF32 back on is refused at its library call, which runs under the
flags of load: `guard.backend_flags`, verifier 19.)
Does nothing on a CPU.
"""

from __future__ import annotations

import torch


def exact_fp32() -> None:
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
