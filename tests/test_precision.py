"""A verifier turns TF32 off: references, baselines and library calls are computed in true FP32."""

import torch

from kgym.verify import Verifier, VerifyConfig


def test_verifier_turns_tf32_off():
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = True
    with Verifier(VerifyConfig(device="cpu"), spares=0):
        assert torch.backends.cudnn.allow_tf32 is False
        assert torch.backends.cuda.matmul.allow_tf32 is False
