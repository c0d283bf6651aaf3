"""The parent's hidden-case transforms and checks keep to bounded memory (verifier 21).

On an 80 GB H100 the parent's draw of a shifted case for KernelBench's 6.4 GB ReLU ran out of memory
beside the candidate (2026-12-07, verifier 20): `mean(dtype=float64)` of a float32 tensor makes a
float64 copy of all of it (12 GiB), and the mixed-sign variant held four full-size temporaries. An
honest kernel got a kgym error instead of a verdict. Now every full-size step holds at most one
full-size tensor (the transform's output) and a mask; sums and flips go a chunk at a time
(`cases.CHUNK`). Measured here on the CPU by the bytes of every fresh tensor torch hands back while a
step runs (a dispatch mode), with the chunk made small.
"""

import weakref

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kgym.verify.parent import cases


class LiveBytes(TorchDispatchMode):
    """The largest sum of bytes held at once by tensors that ops created (views and outputs written in
    place are not new memory)."""

    def __init__(self):
        super().__init__()
        self.live: dict[int, int] = {}
        self.now = self.peak = 0

    def _drop(self, ptr: int) -> None:
        self.now -= self.live.pop(ptr, 0)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        seen = {a.untyped_storage().data_ptr() for a in torch.utils._pytree.tree_leaves((args, kwargs))
                if isinstance(a, torch.Tensor)}
        for t in torch.utils._pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor):
                ptr = t.untyped_storage().data_ptr()
                if ptr and ptr not in seen and ptr not in self.live:
                    self.live[ptr] = t.untyped_storage().nbytes()
                    self.now += self.live[ptr]
                    self.peak = max(self.peak, self.now)
                    weakref.finalize(t, self._drop, ptr)
        return out


def peak_ratio(fn, x: torch.Tensor, *args) -> float:
    """Peak bytes of fresh tensors during fn(x, *args), over x's bytes (its result included)."""
    with LiveBytes() as mode:
        out = fn(x, *args)
    del out
    return mode.peak / (x.numel() * x.element_size())


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(cases, "CHUNK", 1 << 12)


def test_the_probe_sees_what_verifier_20_held():
    # On CUDA, mean(dtype=float64) of a float32 tensor casts all of it first (the 12 GiB of the H100's
    # out-of-memory); the CPU's reduction casts as it goes, so the copy is made explicit here.
    x = torch.randn(64, 1024)
    assert peak_ratio(lambda t: t.abs().to(torch.float64).mean(), x) >= 3.0
    # verifier 20's mixed-sign variant: the draw, a uniform draw, a mask, the negation and the result
    assert peak_ratio(lambda t: torch.where(torch.rand(t.shape) < 0.5, -t, t), x) >= 2.25


@pytest.mark.parametrize("name", [name for name, _ in cases.CASES])
@pytest.mark.parametrize("variant", ["plain", "mixed_sign"])
def test_each_case_transform_holds_one_full_size_tensor_and_a_mask(small_chunks, name, variant):
    transform = dict(cases.CASES)[name]
    if variant == "mixed_sign":
        transform = cases.mixed_sign(transform)
    x = torch.randn(64, 1024)
    x[:, :7] = 0
    assert peak_ratio(transform, x) <= 1.25 + 0.25, name  # the output (x's size), a bool mask, a few chunks


def test_sums_and_the_trivial_check_hold_no_full_size_tensor(small_chunks):
    # a few chunks (a sixteenth of x each here) and, for the trivial check, its samples
    x = torch.randn(64, 1024)
    assert peak_ratio(cases.mean_abs, x) <= 0.5
    assert peak_ratio(lambda t: cases.sum64(t, absolute=True), x) <= 0.5
    assert peak_ratio(cases.all_finite, x) <= 0.5
    assert peak_ratio(cases.trivial_kind, x.relu(), [x]) <= 0.5  # not trivial: the samples reject it
    assert peak_ratio(cases.trivial_kind, x * 2, [x]) <= 0.5  # trivial: every chunk is tried


def test_chunked_sums_agree_with_torch():
    x = torch.randn(3, 5000, dtype=torch.float32)
    assert cases.sum64(x, absolute=True) == pytest.approx(float(x.abs().sum(dtype=torch.float64)), rel=1e-12)
    assert cases.sum64(x) == pytest.approx(float(x.sum(dtype=torch.float64)), rel=1e-9, abs=1e-9)
    assert cases.sum64(torch.empty(0)) == 0.0
