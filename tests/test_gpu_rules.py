"""The runtime rules that only a GPU can exercise (docs/verify.md, "Runtime rules"), run on the H200:
`pytest -m gpu tests/test_gpu_rules.py`.

- The device trace: every verified forward's device kernels are its own Triton kernels (by exact
  name), copies and fills, and a hybrid's library kernels; the timed batch runs exactly `forwards`
  times the verified forward's kernels. A jiterator kernel (compiled and launched by torch without
  the dispatcher, so neither the guard nor the profiler's CPU side sees an op) is compute the GPU
  ran for a non-Triton kernel: refused in the verified runs, and counted in the timed ones.
- The honest kernels of tests/test_runtime_honest.py pass on the device too (several launches, a
  kept scratch, a widened output, a cached weight, cat and transpose by Triton copies), with the
  device trace and the timed-batch profile on.
"""

import pytest
from test_gpu import BIG_RELU, GOOD, HEADER, _passes_but_for_micro_timing
from test_runtime_honest import HONEST

from kgym.verify import Verifier, VerifyConfig
from kgym.verify.parent.cases import N_CASES

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu_verifier(tmp_path_factory):
    cfg = VerifyConfig(device="cuda", measure_compile=False)
    with Verifier(cfg, spares=2, cache_dir=str(tmp_path_factory.mktemp("cache")), case_secret=b"gpu-rules") as v:
        yield v


# A jiterator kernel named like the Triton one: its device name starts with "relu_kernel_", which the
# launch gate's prefix rule would take for the Triton kernel; the device-trace rule matches exactly.
JITERATOR_EVERY_RUN = HEADER + '''
relu_jit = torch.cuda.jiterator._create_jit_fn(
    "template <typename T> T relu_kernel(T x) { return x > T(0) ? x : T(0); }")


class ModelNew(nn.Module):
    def forward(self, x):
        res = relu_jit(x)  # the compute, outside the dispatcher
        out = torch.empty_like(x)
        # a Triton copy of it (relu of relu): the output is a Triton kernel's, as provenance asks
        relu_kernel[(triton.cdiv(x.numel(), 4096),)](res, out, x.numel(), BLOCK=4096)
        return out
'''

# Honest Triton in the 6 hidden cases, the jiterator only in the timed batch; the launch signature is
# the same (a fresh buffer feeds the kernel in both), so only the device trace tells them apart.
JITERATOR_TIMED_ONLY = HEADER + '''
relu_jit = torch.cuda.jiterator._create_jit_fn(
    "template <typename T> T relu_kernel(T x) { return x > T(0) ? x : T(0); }")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        src = x.clone() if self.calls <= N_CASES else relu_jit(x)
        out = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 4096),)](src, out, x.numel(), BLOCK=4096)
        return out
'''.replace("N_CASES", str(N_CASES))  # its first N_CASES forwards are the hidden cases


def test_honest_relu_passes_with_the_device_trace_on(gpu_verifier):
    v = gpu_verifier.verify(BIG_RELU, GOOD)
    assert v.passed, (v.gate, v.reason)
    assert v.device_launches and v.device_launches >= 1
    assert v.timings["candidate"].stable


def test_a_jiterator_kernel_in_the_verified_runs_is_refused(gpu_verifier):
    v = gpu_verifier.verify(BIG_RELU, JITERATOR_EVERY_RUN, static_policy=False)
    assert v.error is None, v.error
    assert v.passed is False and v.gate == "isolation", (v.gate, v.reason)
    assert "not a Triton kernel of this forward" in v.reason, v.reason


def test_a_jiterator_kernel_in_the_timed_runs_only_is_counted(gpu_verifier):
    v = gpu_verifier.verify(BIG_RELU, JITERATOR_TIMED_ONLY, static_policy=False)
    assert v.error is None, v.error
    assert v.passed is False and v.gate == "isolation", (v.gate, v.reason)
    assert v.cases_passed == N_CASES
    # the device trace's words; the launch signature's if torch allocated the jiterator's output
    # outside the dispatcher (then it is no fresh allocation of this forward)
    assert ("the device ran other kernels in the timed runs" in v.reason
            or "the timed runs launched other Triton kernels" in v.reason), v.reason


@pytest.mark.parametrize("kind", sorted(HONEST))
def test_honest_kernels_near_the_rules_pass_on_the_gpu(gpu_verifier, relu_reference, kind):
    reference, source = HONEST[kind]
    v = gpu_verifier.verify(reference or relu_reference, source)
    _passes_but_for_micro_timing(v)
