"""Every gate passing and failing on CPU (Triton interpreter), through the real verifier."""

import pytest

from kgym.reward import reward
from kgym.verify.parent.cases import CASES, N_CASES

from paths import fixture_source

OPS = ["relu", "softmax", "layernorm", "matmul"]


@pytest.mark.parametrize("op", OPS)
def test_known_good_kernel_passes_every_gate(verifier, op):
    v = verifier.verify(fixture_source(op, "reference"), fixture_source(op, "good"))
    assert v.error is None, v.error
    assert v.passed, (v.gate, v.reason)
    assert v.gate is None and v.cases_passed == N_CASES and v.launches >= 1
    assert [c.name for c in v.cases] == [name for name, _ in CASES]
    assert {c.order for c in v.cases} == {"candidate_first", "reference_first"}
    assert v.timings["candidate"].clock == "host" and v.timings["eager"] is not None
    assert v.speedup_eager is not None and 0 < reward(v) <= 1
    assert any("CPU speed is not a verdict" in n for n in v.notes)


@pytest.mark.parametrize("op", OPS)
def test_known_wrong_kernel_fails_correctness(verifier, op):
    v = verifier.verify(fixture_source(op, "reference"), fixture_source(op, "wrong"))
    assert v.error is None, v.error
    assert not v.passed and v.gate == "correctness", (v.gate, v.reason)
    assert v.cases_passed < len(v.cases) == N_CASES and "hidden cases failed" in v.reason
    # partial credit: the share of cases passed, and only where the nominal case is one of them (a
    # wrong layernorm may pass the wide case, which judges range, and still earns nothing)
    nominal = next(c for c in v.cases if c.name == "nominal")
    assert reward(v) == pytest.approx(0.5 * v.cases_passed / N_CASES if nominal.passed else 0.0)


def test_hybrid_answer_passes_only_with_hybrid_allowance(verifier):
    ref, good = fixture_source("linear_relu_hybrid", "reference"), fixture_source("linear_relu_hybrid", "good")
    v = verifier.verify(ref, good, hybrid=True)
    assert v.passed, (v.gate, v.reason)
    assert v.library_calls == 1
    v = verifier.verify(ref, good)
    assert v.gate == "isolation" and ("mm" in v.reason or "matmul" in v.reason), v.reason
    v = verifier.verify(ref, fixture_source("linear_relu_hybrid", "wrong"), hybrid=True)
    assert v.gate == "correctness"


TWO_LIBRARY_CALLS = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=m), 0.0), mask=m)

class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = torch.mm(x, self.linear.weight.t())
        y = torch.mm(y, torch.eye(y.shape[1]))
        out = torch.empty_like(y)
        copy_kernel[(triton.cdiv(out.numel(), 1024),)](y, out, out.numel(), BLOCK=1024)
        return out
'''


def test_hybrid_allows_exactly_one_library_call(verifier):
    v = verifier.verify(fixture_source("linear_relu_hybrid", "reference"), TWO_LIBRARY_CALLS, hybrid=True)
    assert v.gate == "isolation" and not v.passed


COMPILE_ERROR = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def bad_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.no_such_function(tl.load(x_ptr + offs)))

class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        bad_kernel[(triton.cdiv(x.numel(), 4096),)](x, out, x.numel(), BLOCK=4096)
        return out
'''

IMPORT_ERROR = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        raise ValueError("cannot build")

    def forward(self, x):
        return x
'''


def test_compile_gate(verifier, relu_reference):
    v = verifier.verify(relu_reference, COMPILE_ERROR)
    assert v.gate == "compile" and reward(v) == 0.0 and "no_such_function" in v.reason, v.reason
    v = verifier.verify(relu_reference, IMPORT_ERROR)
    assert v.gate == "compile" and "cannot build" in v.reason


def test_policy_gate_reports_line_numbers(verifier, relu_reference):
    v = verifier.verify(relu_reference, "import os\n" + fixture_source("relu", "good"))
    assert v.gate == "policy" and "line 1" in v.reason and reward(v) == 0.0


UNSTABLE = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def relu_spin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=m), 0.0), mask=m)
    if pid == 0:
        # busy work that grows with the input's scale, which the timer changes from run to run (capped:
        # the wide case's 2^17 would spin for minutes)
        spins = ((tl.minimum(tl.abs(tl.load(x_ptr)), 8.0) + 1.0) * 400.0).to(tl.int32)
        k = 0
        while k < spins:
            k += 1

class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        relu_spin_kernel[(triton.cdiv(x.numel(), 4096),)](x, out, x.numel(), BLOCK=4096)
        return out
'''


def test_unstable_timing_gets_no_speed_credit(verifier, relu_reference):
    # Run time that follows the input scale varies from run to run: no speed credit on the CPU.
    # (On CUDA an unstable timing fails the timing gate.)
    v = verifier.verify(relu_reference, UNSTABLE)
    assert v.error is None
    assert v.cases_passed == N_CASES, (v.gate, v.reason)
    assert not v.timings["candidate"].stable
    assert any("timing unstable" in n for n in v.notes)
    assert reward(v) == pytest.approx(0.5)  # correct, no speed credit


def test_verdicts_are_reproducible_with_the_same_secret(verifier):
    ref, wrong = fixture_source("relu", "reference"), fixture_source("relu", "wrong")
    a, b = verifier.verify(ref, wrong), verifier.verify(ref, wrong)
    assert [(c.name, c.passed, c.max_abs_err) for c in a.cases] == [(c.name, c.passed, c.max_abs_err) for c in b.cases]
