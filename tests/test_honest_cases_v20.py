"""Honest kernels against verifier 20's hidden cases (rows: each row its own affine map; wide: x 2^17).

Plain tests: honest kernels whose arithmetic the new cases stress and no other test covers, which must
pass every case (LayerNorm by a chunked Welford merge, attention by an online softmax, cross-entropy by a
max-shifted logsumexp reduced in Triton). Strict xfails: honest float32 kernels the comparison rejects
on a draw of a fixed seed, judged as `Verifier._judge` judges a case (`compare` at the case's cap, then
the float64 re-check), in a child process under Triton's interpreter:
- (fixed, now a plain test) Linear(1024, 512) + tanh on the wide case: at 2^17 the GEMM's float32
  rounding is ~1e-2 absolute, and an element whose pre-activation lands near 0 carries it into tanh's
  output at slope ~1; torch's own float32 error there is 5e-3 (against float64), the re-check's ceiling
  (LOOSE_TOL, 1e-2) stopped it from following (about 1 draw in 10 at this size, on the CPU). The wide
  case now has its own tolerance (`cases.RANGE_TOL`, 0.1): it tells range, the others rounding.
- (fixed in verifier 24, now a plain test) cumsum of rows of 4000 (KernelBench level 1 #89's shape) on the
  nominal draw: a float32 running sum's error grows with the partial sums (~60 here), the absolute term
  stays at 1e-4 (cap 1), and torch's CPU cumsum accumulates in float64, so the re-check saw no error of
  torch's to widen by (not new in verifier 20: the nominal case); verifier 24 measures torch's rounding on a
  float32 running order too (`parent/rounding.py`).
Found by the honest-side sweep of 2026-12-07 (helper wt-honest); the sweep's table is in its report.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgym.reward import reward
from kgym.verify.parent.cases import N_CASES

LN_REF = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, *a):
        super().__init__()
        self.ln = nn.LayerNorm(a[0])

    def forward(self, *xs):
        return self.ln(xs[0])


def get_inputs():
    return [torch.randn(16, 200)]


def get_init_inputs():
    return [200]
'''

LN_WELFORD = '''import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, w_ptr, b_ptr, o_ptr, C, eps, BLOCK: tl.constexpr, WELFORD: tl.constexpr):
    r = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < C
    x = tl.load(x_ptr + r * C + cols, mask=mask, other=0.0)
    if WELFORD:
        # one pass over chunks of 32: each chunk's mean and M2, merged as Chan et al.
        mean = 0.0
        m2 = 0.0
        cnt = 0.0
        for start in range(0, C, 32):
            c = start + tl.arange(0, 32)
            xc = tl.load(x_ptr + r * C + c, mask=c < C, other=0.0)
            nb = tl.minimum(C - start, 32).to(tl.float32)
            mb = tl.sum(xc, 0) / nb
            db = tl.where(c < C, xc - mb, 0.0)
            m2b = tl.sum(db * db, 0)
            tot = cnt + nb
            delta = mb - mean
            mean = mean + delta * nb / tot
            m2 = m2 + m2b + delta * delta * cnt * nb / tot
            cnt = tot
        var = m2 / C
    else:
        mean = tl.sum(x, 0) / C
        d = tl.where(mask, x - mean, 0.0)
        var = tl.sum(d * d, 0) / C
    y = (x - mean) * (1.0 / tl.sqrt(var + eps)) * tl.load(w_ptr + cols, mask=mask) + tl.load(b_ptr + cols, mask=mask)
    tl.store(o_ptr + r * C + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.ln = nn.LayerNorm(n)

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        R, C = x.shape
        k[(R,)](x, self.ln.weight, self.ln.bias, out, C, self.ln.eps, BLOCK=triton.next_power_of_2(C), WELFORD=True)
        return out
'''

ATTN_REF = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, *a):
        super().__init__()
        pass

    def forward(self, *xs):
        return torch.softmax(xs[0] @ xs[1].transpose(-1, -2) / 4.0, dim=-1) @ xs[2]


def get_inputs():
    return [torch.randn(4, 64, 16), torch.randn(4, 64, 16), torch.randn(4, 64, 16)]


def get_init_inputs():
    return []
'''

ATTN = '''import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def attn(q_ptr, k_ptr, v_ptr, o_ptr, S, scale, D: tl.constexpr, BQ: tl.constexpr, BKV: tl.constexpr):
    b, pq = tl.program_id(0), tl.program_id(1)
    rq = pq * BQ + tl.arange(0, BQ)
    d = tl.arange(0, D)
    base = b * S * D
    q = tl.load(q_ptr + base + rq[:, None] * D + d[None, :], mask=rq[:, None] < S, other=0.0)
    m = tl.full((BQ,), -float("inf"), tl.float32)
    l = tl.zeros((BQ,), tl.float32)
    acc = tl.zeros((BQ, D), tl.float32)
    for s0 in range(0, S, BKV):
        rk = s0 + tl.arange(0, BKV)
        kk = tl.load(k_ptr + base + rk[:, None] * D + d[None, :], mask=rk[:, None] < S, other=0.0)
        vv = tl.load(v_ptr + base + rk[:, None] * D + d[None, :], mask=rk[:, None] < S, other=0.0)
        s = tl.dot(q, tl.trans(kk), input_precision="ieee") * scale
        s = tl.where(rk[None, :] < S, s, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l = l * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p, vv, input_precision="ieee")
        m = m_new
    tl.store(o_ptr + base + rq[:, None] * D + d[None, :], acc / l[:, None], mask=rq[:, None] < S)


class ModelNew(nn.Module):
    def forward(self, q, k, v):
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        B, S, D = q.shape
        o = torch.empty_like(q)
        attn[(B, triton.cdiv(S, 16))](q, k, v, o, S, 0.25, D=D, BQ=16, BKV=16)
        return o
'''

CE_REF = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, *a):
        super().__init__()
        pass

    def forward(self, *xs):
        return F.cross_entropy(xs[0], xs[1])


def get_inputs():
    return [torch.randn(32, 100), torch.randint(0, 100, (32,))]


def get_init_inputs():
    return []
'''

CE = '''import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, t_ptr, o_ptr, C, scale, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < C
    x = tl.load(x_ptr + r * C + cols, mask=mask, other=-float("inf"))
    m = tl.max(x, 0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), 0))
    v = lse - tl.load(x_ptr + r * C + tl.load(t_ptr + r))
    tl.atomic_add(o_ptr, v * scale)


class ModelNew(nn.Module):
    def forward(self, *xs):
        xs = [x.contiguous() for x in xs]
        out = torch.zeros((), device=xs[0].device)
        R, C = xs[0].shape[0], xs[0].shape[-1]
        k[(R,)](*xs, out, C, 1.0 / (R), BLOCK=triton.next_power_of_2(C))
        return out
'''

TANH_REF = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, *a):
        super().__init__()
        self.lin = nn.Linear(a[0], a[1])

    def forward(self, *xs):
        return torch.tanh(self.lin(xs[0]))


def get_inputs():
    return [torch.randn(128, 1024)]


def get_init_inputs():
    return [1024, 512]
'''

LINEAR_TANH = '''import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def lin(x_ptr, w_ptr, b_ptr, o_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * K + rk[:, None], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    acc = 2.0 * tl.sigmoid(2.0 * acc) - 1.0
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.lin = nn.Linear(i, o)

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        N = self.lin.out_features
        out = torch.empty(M, N, device=x.device)
        lin[(triton.cdiv(M, 32), triton.cdiv(N, 16))](x, self.lin.weight, self.lin.bias, out, M, N, K,
                                                     BM=32, BN=16, BK=32)
        return out
'''

CUMSUM_REF = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, *a):
        super().__init__()
        pass

    def forward(self, *xs):
        return torch.cumsum(xs[0], dim=1)


def get_inputs():
    return [torch.randn(16, 4000)]


def get_init_inputs():
    return []
'''

CUMSUM = '''import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, o_ptr, C, OC, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < C
    x = tl.load(x_ptr + r * C + cols, mask=mask, other=0.0).to(tl.float32)
    y = tl.cumsum(x, 0)
    tl.store(o_ptr + r * OC + cols, y.to(o_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, *a):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        R, C = x.shape
        out = torch.empty_like(x)
        OC = out.shape[1] if out.dim() == 2 else 1
        k[(R,)](x, out, C, OC, BLOCK=triton.next_power_of_2(C))
        return out
'''

PASSING = {
    "layernorm_welford_chunks": (LN_REF, LN_WELFORD),
    "attention_online_softmax": (ATTN_REF, ATTN),
    "cross_entropy_logsumexp_in_triton": (CE_REF, CE),
}


@pytest.mark.parametrize("kind", sorted(PASSING))
def test_honest_kernel_passes_every_case(verifier, kind):
    reference, source = PASSING[kind]
    v = verifier.verify(reference, source)
    assert v.error is None, v.error
    assert v.passed is True, (kind, v.gate, v.reason)
    assert v.cases_passed == len(v.cases) == N_CASES
    assert reward(v) == 0.5  # the correctness share; the CPU earns no speed credit


# One case of one draw, judged as Verifier._judge judges it; prints "passed" or the comparison's note.
JUDGE = r'''
import copy, importlib.util, sys, torch
from kgym.verify.parent import cases as C
from kgym.verify.parent.rounding import float32_order_forward
ref_path, cand_path, kind, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

R, N = load(ref_path, "ref_mod"), load(cand_path, "cand_mod")
torch.manual_seed(0)
model = R.Model(*R.get_init_inputs())
torch.manual_seed(0)
cand = N.ModelNew(*R.get_init_inputs())
with torch.no_grad():
    nominal = model(*C.make_inputs(R.get_inputs, seed, lambda x: x, torch.device("cpu")))
    inputs = C.make_inputs(R.get_inputs, seed, dict(C.CASES)[kind], torch.device("cpu"))
    ref, out = model(*inputs), cand(*inputs)
    cap = C.case_cap(C.mean_abs(ref), C.mean_abs(nominal))
    tol = C.case_tolerance(kind, None)
    cmp = C.compare(out, ref, tol, cap)
    if not cmp.passed:
        ref64 = copy.deepcopy(model).double()(*[x.double() if x.is_floating_point() else x for x in inputs])
        ordered32 = float32_order_forward(copy.deepcopy(model), inputs)
        cmp = C.compare_rounded(out, ref, ref64.double(), tol, cap, ordered32) or cmp
print("passed" if cmp.passed else f"failed: {cmp.note}")
'''


def _judged(tmp_path, reference, source, kind, seed):
    for name, text in (("judge.py", JUDGE), ("ref.py", reference), ("cand.py", source)):
        (tmp_path / name).write_text(text)
    root = str(Path(__file__).resolve().parent.parent)  # this checkout's kgym, not an installed one
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": root}
    out = subprocess.run([sys.executable, "-P", str(tmp_path / "judge.py"), str(tmp_path / "ref.py"),
                          str(tmp_path / "cand.py"), kind, str(seed)], env=env, capture_output=True, text=True,
                         timeout=300, cwd=root)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip().splitlines()[-1]


def test_linear_tanh_on_the_wide_case(tmp_path):
    """Was a false rejection (GEMM rounding at 2^17 through tanh's slope near 0, the re-check's 1e-2
    ceiling); the wide case now judges range, not rounding (`cases.RANGE_TOL`; what it still refuses:
    tests/test_cases.py)."""
    assert _judged(tmp_path, TANH_REF, LINEAR_TANH, "wide", 1009) == "passed"


def test_cumsum_of_4000_on_a_nominal_draw(tmp_path):
    """Was a false rejection (strict xfail until verifier 24): torch's CPU cumsum accumulates in float64,
    so the re-check saw no float32 error of torch's to widen by; it now measures torch's rounding on a
    float32 running order (`rounding.Float32Accumulation`). Its attacks: tests/test_rounding_order.py."""
    assert _judged(tmp_path, CUMSUM_REF, CUMSUM, "nominal", 1001) == "passed"
