"""Gate 4's hidden cases and the comparison, both in the trusted parent.

Nine cases, each from its own fresh seed: nominal inputs, x3, x0.01, negated, absolute value,
shifted (every nonzero value moved up by 200 x mean|x|), rows (each row scaled and shifted by its own
factor and offset: no statistic of the whole draw stands for a row's), wide (x 2^17: magnitudes
past fp16's range, row spreads past exp's) and spike (one value at a random place x 2^12: no
sample of a row stands for the row); transforms apply to floating-point tensors only;
`mixed_sign` gives a case's variant where its inputs leave the operation trivial, judged by
`trivial_kind`, and an OVERFLOW_CASES case whose reference output overflows is replaced by a plain draw;
the verifier's `_case_plan` decides). The seeds come from a secret the candidate's
process never sees. Inputs are generated on the verification device (`with torch.device(...)`), so a
6.4 GB input costs milliseconds, not the minute KernelBench spends on the CPU.

Tolerance, per element: |out - ref| <= tol * |ref| + tol * min(cap, mean|ref|), tol = 1e-4 for FP32:
KernelBench's atol = rtol = 1e-4, with the absolute part scaled down for small outputs (the x0.01
case) so a wrong answer cannot hide under it, and up with the case's own scale: `cap` is 1 where
the case's outputs are no larger than the nominal draw's, else their ratio (`case_cap`: the x3 and
wide cases of a linear op, 3 and 2^17), so the nominal draw's bound carried to the case's units
(scale-invariant: an honest float32 GEMM's error near a cancelled sum grows with its operands; with
the cap at 1 a 2^17 case refused six honest registry solutions). NaN/Inf where the reference has none fails.
Tolerance by dtype: fp16 1e-3, bf16 1e-2, float64 1e-9 (float32 arithmetic, 2^-24 ~ 6e-8 per rounding,
cannot pass it; honest float64 reorderings differ by ~1e-15), unless the task declares its own
(`VerifyConfig.tolerance`). Values are compared in float64 when the reference is float64 (casting
both to float32 first would hide exactly the error the tolerance is there to see).
"""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from kgym.verify.bitwise import same

# Elements a full-size step works on at a time (compared, summed, flipped): bounded extra memory for
# multi-GB outputs.
CHUNK = 1 << 26
SHIFT = 200.0  # the shifted case moves every nonzero value by this many times the input's mean |x|


def _shifted(x: torch.Tensor) -> torch.Tensor:
    """Every nonzero value moved up by SHIFT x mean|x| (zeros kept: a triangular or masked input stays
    so). The other cases only rescale or reflect the draw, which a kernel that is right only near zero
    passes: softmax without its max subtraction (overflow past x + 89), variance as E[x^2] - E[x]^2 (which
    cancels), both found by our red team (2026-12-04)."""
    c = sum64(x, absolute=True) / x.numel() * SHIFT if x.numel() else 0.0
    y = x + c
    return torch.where(x != 0, y, x, out=y)  # in place: one full-size tensor and a mask (`sum64`'s why)


ROW_OCTAVES = 3.0  # the rows case's widths: 2^-u of the draw's range, u uniform in [0, ROW_OCTAVES]


def _rows(x: torch.Tensor) -> torch.Tensor:
    """Each row (a slice along the last dimension; a 1-D tensor is one row) mapped affinely, its own
    smallest value to its largest, onto its own random part of the draw's range [-max|x|, max|x|]:
    of width 2^-u of that range (u uniform in [0, ROW_OCTAVES]) at a uniform place in it. So each
    row has its own factor and offset, every value stays within the draw's own range (no range check
    tells the case from a nominal draw), and zeros stay (as in the shifted case). Drawn from the
    case's seeded generator, after `get_inputs`. Why: every other case draws its elements i.i.d., so
    a statistic of the whole draw stood for each row's: a second-order expansion around the draw's
    mean answered KernelBench level 2 #56 (a sum of sigmoids of a GEMM) within 1e-4 without the GEMM
    (red team by class, 2026-12-07); here each row has its own mean and spread."""
    if x.dim() == 0 or x.numel() == 0:
        return x
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    v = x.to(work)
    top = v.abs().max()
    lo, hi = v.amin(-1, keepdim=True), v.amax(-1, keepdim=True)
    width = 2 * top * torch.exp2(-ROW_OCTAVES * torch.rand(lo.shape, device=x.device, dtype=work))
    start = -top + (2 * top - width) * torch.rand(lo.shape, device=x.device, dtype=work)
    span = (hi - lo).where(hi > lo, torch.ones_like(lo))
    y = v.sub(lo).div_(span).mul_(width).add_(start).clamp_(-top, top).to(x.dtype)  # one full-size tensor
    return torch.where(x != 0, y, x, out=y)  # in place, with a mask


WIDE = 2.0 ** 17  # the wide case's factor: a power of two, so the scaling itself is exact


def _wide(x: torch.Tensor) -> torch.Tensor:
    """The draw times 2^17: values past fp16's 65504 and row spreads far past exp's range (~88), so
    arithmetic right only in a narrow range fails (softmax shifted by a row's first element instead of
    its max, a GEMM in split fp16 pieces; red team by class, 2026-12-07); exact in binary, so an honest
    float32 kernel of an op homogeneous of degree d returns 2^17d x its answer on the same draw."""
    return x * WIDE


SPIKE = 2.0 ** 12  # the spike case's factor: a power of two, so the spike is exact
SPIKE_MAX = 2.0 ** 24  # the largest factor `spike_by` is given (the verifier's `_case_plan`)
SPIKE_STEP = 2.0 ** 4  # the factor grows by this much while the reference barely feels the spike
SPIKE_FELT = 16.0  # how far the spike must move the reference's output, in units of the case's bound
SPIKE_PROBE_NUMEL = 1 << 20  # outputs this small or smaller are probed (`spike_felt`); larger ones keep SPIKE


def spike_by(factor: float) -> Callable[[torch.Tensor], torch.Tensor]:
    """The spike case's transform (`spike_case`: factor SPIKE): the draw with one value, at a position drawn
    from the case's seeded generator after `get_inputs`, multiplied by `factor`, in each floating-point
    input of the most elements (`make_inputs`; since verifier 24, every input before) (zeros stay: a zero
    drawn there leaves the draw as it was).
    Why: every other case is an affine image of the draw's i.i.d. values, row by row, so any part of a
    row stands for all of it, and a kernel that read a sample of each row passed them all: a mean
    cross-entropy whose rows' logsumexps were estimated from their first quarter passed every case and
    timed run (red team by class, 2026-12-07; tests/exploits/test_sampled_logsumexp.py). One value: a
    kernel that reads a sample cannot tell this case from another unless the sample holds the spike
    (with several spikes a sample held one, and the kernel computed honestly there alone); x 2^12: one
    value moves a reduction of ~1e9 terms past 1e-4 (a mean of squares, MSE) and a row's logsumexp by
    thousands, and an honest float32 GEMM's rounding in the spike's row (2^-24 x 2^12 of a product)
    stays inside the absolute term for a reduction of more than ~6 terms.
    Verifier 24: where the reference barely feels a spike of 2^12 (`spike_felt` under SPIKE_FELT: a mean of
    ~1e9 terms each linear in its value, a hinge or Huber loss, moves by ~2^12 / 1e9 of a term, far inside
    1e-4), the verifier's `_case_plan` raises the factor by SPIKE_STEP up to SPIKE_MAX while the output
    stays finite (`spike_by`): a kernel that read an eighth of KernelBench's hinge loss predictions
    passed five kinds of nine with 4x margin, the spike's among the rest (red team by class on the
    judge's comparison, 2026-12-07; tests/exploits/test_linear_loss_sample.py)."""
    def spike(x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 0 or x.numel() == 0:
            return x
        y = x.clone(memory_format=torch.contiguous_format)
        flat = y.view(-1)
        k = int(torch.randint(flat.numel(), ()))
        flat[k] = flat[k] * factor
        return y
    spike.factor = factor  # type: ignore[attr-defined]
    spike.largest_only = True  # type: ignore[attr-defined]  # `make_inputs`: the largest inputs alone
    return spike


spike_case = spike_by(SPIKE)  # the spike case as CASES holds it (the plan raises its factor: `spike_by`)


def spike_felt(spiked: Any, plain: Any, tolerance: float | None = None, cap: float = 1.0) -> float | None:
    """How far a spike moved the reference's output: max |spiked - plain| over the bound of `compare`
    on `spiked` (tol |ref| + tol min(cap, mean|ref|)); None where it cannot tell (not floating, other
    shapes, NaN or Inf on either side, more than SPIKE_PROBE_NUMEL values)."""
    if not (isinstance(spiked, torch.Tensor) and isinstance(plain, torch.Tensor) and spiked.is_floating_point()
            and spiked.shape == plain.shape and 0 < spiked.numel() <= SPIKE_PROBE_NUMEL):
        return None
    a, b = spiked.detach().double().reshape(-1), plain.detach().double().reshape(-1)
    if not (bool(torch.isfinite(a).all()) and bool(torch.isfinite(b).all())):
        return None
    tol = tolerance_for(spiked.dtype, tolerance)
    bound = tol * a.abs() + tol * min(cap, float(a.abs().mean()))
    return float(((a - b).abs() / bound.clamp_min(1e-300)).max())


CASES: tuple[tuple[str, Callable[[torch.Tensor], torch.Tensor]], ...] = (
    ("nominal", lambda x: x),
    ("x3", lambda x: x * 3.0),
    ("x0.01", lambda x: x * 0.01),
    ("negated", lambda x: -x),
    ("abs", lambda x: x.abs()),
    ("shifted", _shifted),
    ("rows", _rows),
    ("wide", _wide),
    ("spike", spike_case),
)
N_CASES = len(CASES)  # hidden cases a verdict runs (the plan's replacements keep the count)
# Cases outside the draw's range, where an operation of limited range (exp, a power) may overflow in
# the reference itself: replaced by a plain draw where the reference's output is not finite there and
# is on the nominal draw (the verifier's `_case_plan`): no kernel can be judged on an overflow.
RANGE_CASES = frozenset({"wide"})
# Cases whose reference output may overflow where the nominal one does not (values past exp's or a
# half type's range): each is replaced by a plain draw there (the verifier's `_case_plan`). The spike
# case is one (one value x 2^12) but is judged at the strict tolerance: it tells unread values.
OVERFLOW_CASES = RANGE_CASES | {"spike"}
# The strict tolerance of a RANGE_CASES case (0.1, or the task's declared one where looser): such a case
# tells arithmetic that breaks outside a narrow range (NaN, Inf, errors of the output's own size), not
# rounding, which the other cases judge at the dtype's tolerance. Why: at 2^17 an honest float32 GEMM's
# rounding is ~1e-2 absolute, and an output that does not grow with its input (a GEMM then tanh, whose
# pre-activation lands near 0) carries it almost whole: an honest Linear+tanh failed the wide case on about
# one draw in ten at 1e-4 (and the 1e-2 ceiling of the float64 re-check), ~13 wide timed runs a GPU verdict.
RANGE_TOL = 0.1


def case_tolerance(name: str, declared: float | None) -> float | None:
    """The strict tolerance of hidden case (or timed kind) `name`: the task's (`declared`; None: the
    dtype's) for every case but RANGE_CASES, which take RANGE_TOL or the declared one where looser."""
    if name not in RANGE_CASES:
        return declared
    return max(RANGE_TOL, declared or 0.0)


def mixed_sign(transform: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    """A case's mixed-sign variant: its transform, then every value's sign flipped on a fair coin (drawn
    from the case's own seeded generator, after `get_inputs`). It replaces a case whose inputs leave the
    operation trivial (`trivial_kind`): ReLU on the abs or shifted inputs is the identity."""
    if getattr(transform, "largest_only", False):  # the spike: its others (`make_inputs`) get the flips alone
        largest, others = mixed_sign(_as_is(transform)), mixed_sign(getattr(transform, "others", lambda x: x))
        largest.largest_only, largest.others = True, others  # type: ignore[attr-defined]
        return largest

    def variant(x: torch.Tensor) -> torch.Tensor:
        y = transform(x)
        if y is x or not y.is_contiguous() or y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
            y = y.clone(memory_format=torch.contiguous_format)  # never flip the draw's own values
        flat = y.view(-1)
        for i in range(0, flat.numel(), CHUNK):  # in place, a chunk at a time (`sum64`'s why)
            part = flat[i:i + CHUNK]
            torch.where(torch.rand(part.shape, device=part.device) < 0.5, part.neg(), part, out=part)
        return y
    return variant


def _as_is(transform: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    """`transform` without the attributes `make_inputs` reads (a plain function calling it)."""
    return lambda x: transform(x)


STRICT_TOL = 1e-4
LOOSE_TOL = 1e-2
# Tolerance for outputs that are not float32 (a reference in fp16/bf16 keeps its own precision).
_DTYPE_TOL = {torch.float16: 1e-3, torch.bfloat16: 1e-2, torch.float64: 1e-9}


def case_seed(secret: bytes, public_seed: int, case: str, salt: str = "") -> int:
    """A seed for one hidden case: derived from a secret, so the candidate cannot know it. `salt`
    (`VerifyConfig.case_salt`; RL episodes give each candidate's source hash) gives every salt its own
    draws: inputs a candidate sees must not be derivable from what an earlier verdict showed."""
    msg = f"{public_seed}:{case}" + (f":{salt}" if salt else "")
    digest = hmac.new(secret, msg.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << 63) - 1)


def seed_generators(seed: int) -> None:
    """`torch.manual_seed(seed)` for the generators a draw on the CPU or a CUDA device uses: the CPU's
    and, once CUDA is started, every CUDA device's (the same calls torch.manual_seed makes for them).
    torch.manual_seed also queues seeds for backends kgym never draws on (XPU, MTIA, MPS, custom
    devices), each queued with a formatted Python traceback: ~0.28 ms a call on the CPU, for every
    timed run's draw. Where CUDA exists but has not started in this process, torch.manual_seed itself
    (its seed must wait for CUDA's start, as it always did)."""
    if torch.cuda.is_initialized():
        torch.default_generator.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
    elif not torch.cuda.is_available():  # a CPU build or no GPU: CUDA never starts here
        torch.default_generator.manual_seed(seed)
    else:
        torch.manual_seed(seed)


def make_inputs(get_inputs: Callable[[], list[Any]], seed: int, transform: Callable, device: torch.device
                ) -> list[Any]:
    seed_generators(seed)
    with torch.device(device):
        raw = list(get_inputs())
    # A transform marked `largest_only` (the spike) applies to the floating-point inputs of the most
    # elements alone, the others get its `others` (as they are): a spike in a small input (a hinge
    # loss's 32768 targets beside 1e9 predictions) told a kernel that read that input whole which case
    # it was in, and it computed honestly there alone (red team by class, 2026-12-07).
    largest = max((x.numel() for x in raw if isinstance(x, torch.Tensor) and x.is_floating_point()), default=0)
    out = []
    for x in raw:
        if isinstance(x, torch.Tensor):
            x = x.to(device)
            if x.is_floating_point():
                f = transform
                if getattr(transform, "largest_only", False) and x.numel() != largest:
                    f = getattr(transform, "others", lambda t: t)
                x = f(x).contiguous()
        out.append(x)
    return out


@dataclass(frozen=True)
class Comparison:
    passed: bool
    passed_loose: bool
    max_abs_err: float | None
    max_rel_err: float | None
    note: str = ""


def mean_abs(out: Any) -> float | None:
    """mean|out| of a floating-point tensor with every value finite, else None (`case_cap`'s figure)."""
    if not (isinstance(out, torch.Tensor) and out.is_floating_point() and out.numel()):
        return None
    m = sum64(out, absolute=True) / out.numel()
    return m if math.isfinite(m) else None


def sum64(x: torch.Tensor, *, absolute: bool = False) -> float:
    """The float64 sum of `x` (of |x| with `absolute`), a chunk of CHUNK values at a time, one
    synchronisation. Why: torch's `sum` and `mean` with dtype=float64 of a float32 tensor first make a
    float64 copy of the whole tensor: 12 GiB for KernelBench's 6.4 GB ReLU input, and the parent's draw
    of a shifted case ran out of memory on an 80 GB H100 beside the candidate (verifier 20, 2026-12-07);
    here one chunk's copy at most (512 MiB). Every full-size step of the hidden cases' transforms and
    checks keeps to at most one full-size temporary and a mask (tests/test_case_memory.py)."""
    flat = x.detach().reshape(-1)
    if flat.numel() == 0:
        return 0.0
    parts = [(flat[i:i + CHUNK].abs() if absolute else flat[i:i + CHUNK]).sum(dtype=torch.float64)
             for i in range(0, flat.numel(), CHUNK)]
    return float(torch.stack(parts).sum())


def all_finite(x: torch.Tensor) -> bool:
    """Is every value of `x` finite (an integer tensor's always are)? A chunk at a time, one
    synchronisation: torch's `isfinite` is composed of |x| and three masks, 1.75 times a float32
    tensor's size at once (`sum64`'s why)."""
    if not x.is_floating_point():
        return True
    flat = x.detach().reshape(-1)
    if flat.numel() == 0:
        return True
    return bool(torch.stack([torch.isfinite(flat[i:i + CHUNK]).all() for i in range(0, flat.numel(), CHUNK)]).all())


def case_cap(case_mean: float | None, nominal_mean: float | None) -> float:
    """A case's cap on the absolute term's scale: the mean|ref| of its reference output over the
    nominal draw's (`mean_abs` of each), where that is above 1, else 1 (a case no larger than the
    nominal draw is judged as before verifier 20); 1 where either is None or the nominal one is 0.
    Why: `compare`'s absolute term tol x min(1, mean|ref|) is the nominal draw's; a case 2^17 times
    larger needs it 2^17 times larger, or an honest GEMM's rounding near a cancelled sum fails it."""
    if case_mean is None or nominal_mean is None or not nominal_mean > 0:
        return 1.0
    return max(1.0, case_mean / nominal_mean)


def tolerance_for(dtype: torch.dtype, declared: float | None = None) -> float:
    """The strict tolerance of an output dtype: the task's declared one, else the dtype's own (float64
    is tighter than float32's 1e-4, half types looser)."""
    if declared is not None:
        if not (0 < declared < 1):
            raise ValueError(f"a declared tolerance must lie in (0, 1), not {declared!r}")
        return declared
    if dtype == torch.float64:
        return _DTYPE_TOL[torch.float64]
    return max(STRICT_TOL, _DTYPE_TOL.get(dtype, 0.0))




def compare(out: torch.Tensor, ref: torch.Tensor, tolerance: float | None = None, cap: float = 1.0) -> Comparison:
    """Is `out` within tolerance of `ref`? Both are tensors of the same shape and dtype. `tolerance`:
    the task's declared strict tolerance (None: the dtype's, see `tolerance_for`); `cap`: the case's
    cap on the absolute term's scale (`case_cap`; 1 for a draw of the nominal scale).

    An output that passes with every value finite on both sides (an honest hidden case) is judged by
    `_compare_finite`: the same expressions, two synchronisations in all; anything else (a value out
    of tolerance, NaN or Inf on either side) by `_compare_chunks`, which names what failed."""
    if not ref.is_floating_point():
        equal = torch.equal(out, ref)
        return Comparison(equal, equal, None, None, "" if equal else "integer output differs")
    o_all, r_all = out.reshape(-1), ref.reshape(-1)
    if r_all.numel() == 0:
        return Comparison(True, True, 0.0, 0.0)
    return _compare_finite(o_all, r_all, tolerance, cap) or _compare_chunks(o_all, r_all, tolerance, cap)


def _compare_finite(o_all: torch.Tensor, r_all: torch.Tensor, tolerance: float | None, cap: float
                    ) -> Comparison | None:
    """`_compare_chunks`'s verdict where it is a pass with every value finite, else None (the caller
    then runs `_compare_chunks`). Why: on a GPU `_compare_chunks` synchronises ~7 times per chunk of
    64M values (a Python bool, int or float of a device value each), ~200 times for KernelBench's
    6.4 GB ReLU output, 126 ms a hidden case on an H200, against ~15 passes of memory traffic; here
    each chunk's figures stay on the device and are read once per loop.

    The same: with every reference value finite, `_compare_chunks`'s `fin` is all True, so its
    `where(fin, 0)` changes nothing, its finite count is n and it filters nothing; with every output
    value finite it returns early nowhere; the chunk sums of |ref| are the same float64 reductions of
    the same chunks, added in the same order in Python floats, so the scale is the same float; `diff`,
    the relative error and the strict bound are the same expressions on the same chunks (|ref|
    computed once instead of three times: the same values), and the largest errors are Python `max`
    over the same chunk maxima. A pass needs no strict value out of bounds (else None: the slow path
    names the first ones), and then no loose one either: the loose bound is the strict one's
    expression with a factor at least as large, and rounding is monotone, so it is never smaller."""
    n = r_all.numel()
    work = torch.float64 if r_all.dtype == torch.float64 else torch.float32
    sums, finite = [], []
    for i in range(0, n, CHUNK):
        r = r_all[i:i + CHUNK].to(work)
        finite.append(torch.isfinite(r).all())
        sums.append(r.abs().sum(dtype=torch.float64))
    if not bool(torch.stack(finite).all()):
        return None
    abs_sum = 0.0
    for x in torch.stack(sums).tolist():
        abs_sum += x
    scale = min(cap, abs_sum / n)
    strict = tolerance_for(r_all.dtype, tolerance)
    figures = []  # per chunk: output all finite, largest |diff|, largest relative error, strict failures
    for i in range(0, n, CHUNK):
        o, r = o_all[i:i + CHUNK].to(work), r_all[i:i + CHUNK].to(work)
        ra = r.abs()
        diff = (o - r).abs()
        figures.append(torch.stack((
            torch.isfinite(o).all().to(torch.float64),
            diff.max().to(torch.float64),
            (diff / ra.clamp_min(1e-12)).max().to(torch.float64),
            (diff > strict * ra + strict * scale).sum().to(torch.float64),
        )))
    max_abs = max_rel = 0.0
    for fin, d, rel, bad in torch.stack(figures).tolist():
        if fin != 1.0 or bad != 0.0:
            return None
        max_abs, max_rel = max(max_abs, d), max(max_rel, rel)
    return Comparison(True, True, max_abs, max_rel)


def _compare_chunks(o_all: torch.Tensor, r_all: torch.Tensor, tolerance: float | None, cap: float) -> Comparison:
    """`compare` chunk by chunk, with its notes: the first NaN/Inf mismatch, the count and first
    indices of values out of tolerance."""
    n = r_all.numel()
    work = torch.float64 if r_all.dtype == torch.float64 else torch.float32
    abs_sum, finite_n = 0.0, 0
    for i in range(0, n, CHUNK):
        r = r_all[i:i + CHUNK].to(work)
        fin = torch.isfinite(r)
        abs_sum += float(r.abs().where(fin, 0).sum(dtype=torch.float64))
        finite_n += int(fin.sum())
    scale = min(cap, abs_sum / finite_n) if finite_n else cap
    strict = tolerance_for(r_all.dtype, tolerance)
    loose_tol = max(LOOSE_TOL, strict)
    max_abs = max_rel = 0.0
    bad_strict = bad_loose = 0
    first_bad: list[str] = []
    for i in range(0, n, CHUNK):
        o, r = o_all[i:i + CHUNK].to(work), r_all[i:i + CHUNK].to(work)
        fin = torch.isfinite(r)
        if bool((fin & ~torch.isfinite(o)).any()):
            k = int((fin & ~torch.isfinite(o)).sum())
            return Comparison(False, False, math.inf, math.inf,
                              f"{k} NaN/Inf values where the reference is finite")
        if not bool(fin.all()):
            same = (o == r) | (torch.isnan(o) & torch.isnan(r))
            if bool((~fin & ~same).any()):
                return Comparison(False, False, math.inf, math.inf, "NaN/Inf of the reference not reproduced")
            o, r = o[fin], r[fin]
        diff = (o - r).abs()
        if diff.numel() == 0:
            continue
        max_abs = max(max_abs, float(diff.max()))
        max_rel = max(max_rel, float((diff / r.abs().clamp_min(1e-12)).max()))
        bad = diff > strict * r.abs() + strict * scale
        bad_strict += int(bad.sum())
        bad_loose += int((diff > loose_tol * r.abs() + loose_tol * scale).sum())
        if bad.any() and len(first_bad) < 3:
            for j in torch.nonzero(bad).flatten()[: 3 - len(first_bad)].tolist():
                first_bad.append(f"[{i + j}] got {float(o[j]):.6g} want {float(r[j]):.6g}")
    note = ""
    if bad_strict:
        note = f"{bad_strict} of {n} values out of tolerance (flat index: {', '.join(first_bad)})"
    return Comparison(bad_strict == 0, bad_loose == 0, max_abs, max_rel, note)


def within(out: torch.Tensor, ref: torch.Tensor, tolerance: float | None = None, cap: float = 1.0) -> bool:
    """The fast pass of `compare`, for the timed runs (every one is judged: "Every output is judged",
    docs/verify.md): True only where `compare(out, ref, tolerance, cap).passed` is True, False where it
    cannot tell (a value out of tolerance, a NaN or Inf on either side), and the caller then runs
    `compare` for the verdict and its note. The same expressions in the same dtype, element for
    element (the scale from the same chunked float64 sums of |ref|; the bound `strict * |ref| +
    strict * scale`; `diff <= bound` is `not diff > bound` where no NaN is involved, and a NaN or Inf
    output makes `diff <= bound` false), without what only a report needs (the largest errors, the
    loose count, the first bad indices): 8 passes over the values and one synchronisation per chunk
    and sum, against compare's ~30 passes and ~10 (on a loaded 2-core CPU, where each parallel
    reduction waits on a descheduled thread, 1-5 ms against 5-150 ms for 65K values). On a GPU one
    fused kernel reads each value once, with a margin that keeps it inside compare's bound
    (`judge_kernel.within_cuda`: 2.9 ms for a 6.4 GB output on an H200, against 126 ms for compare and
    36 ms for the expressions above)."""
    if not ref.is_floating_point():
        return bool(torch.equal(out, ref))
    if ref.is_cuda and out.is_cuda and ref.dtype == out.dtype:
        from kgym.verify.parent import judge_kernel  # the parent's alone: the child never loads it

        if ref.dtype in judge_kernel.DTYPES:
            try:
                return judge_kernel.within_cuda(out, ref, tolerance_for(ref.dtype, tolerance), cap)
            except Exception:  # noqa: BLE001 - the fast pass only saves time: torch's expressions below judge
                pass
    o_all, r_all = out.reshape(-1), ref.reshape(-1)
    n = r_all.numel()
    if n == 0:
        return True
    work = torch.float64 if ref.dtype == torch.float64 else torch.float32
    abs_sum = 0.0
    for i in range(0, n, CHUNK):
        abs_sum += float(r_all[i:i + CHUNK].to(work).abs().sum(dtype=torch.float64))
    if not math.isfinite(abs_sum):  # a reference value is NaN or Inf: compare's own path
        return False
    scale = min(cap, abs_sum / n)  # every reference value is finite: compare's finite count is n
    strict = tolerance_for(ref.dtype, tolerance)
    for i in range(0, n, CHUNK):
        o, r = o_all[i:i + CHUNK].to(work), r_all[i:i + CHUNK].to(work)
        bound = r.abs().mul_(strict).add_(strict * scale)
        if not bool(torch.le(torch.sub(o, r).abs_(), bound).all()):
            return False
    return True


def unchanged(a: torch.Tensor, b: torch.Tensor) -> bool:
    """`bitwise.same(a, b)` (the same bits at every position, or NaN in both): the parent's check that
    a lent input is as it was lent. On a GPU, contiguous tensors of one shape and dtype first get
    one fused pass that passes only when every byte is equal (`judge_kernel.identical_cuda`, where
    `bitwise.same` writes and reads back a full-size bool tensor); any other case, and any difference
    it finds, is `bitwise.same`'s to decide."""
    if (a.is_cuda and b.is_cuda and a.device == b.device and a.shape == b.shape and a.dtype == b.dtype
            and a.is_contiguous() and b.is_contiguous()):
        from kgym.verify.parent import judge_kernel  # the parent's alone: the child never loads it

        try:
            if judge_kernel.identical_cuda(a, b):
                return True
        except Exception:  # noqa: BLE001 - the fast pass only saves time: bitwise.same below judges
            pass
    return same(a, b)


def trivial_kind(ref_out: Any, inputs: list[Any], tolerance: float | None = None, cap: float = 1.0) -> str | None:
    """What trivial function of its inputs the reference's output is, within the strict tolerance of
    `compare` (a kernel computing that function would pass the case): "a constant (c)", zeros
    included, or "a x input k" (a copy, a negation or a scaling of an input of as many elements,
    whatever its shape); None if neither. Judged for finite floating-point outputs of two or more
    elements (an output with NaN or Inf is not judged). Cost: two passes over the output, then each
    candidate function is tried on a strided sample of 4096 elements first and on the whole output
    only if the sample fits it (a non-trivial output costs little more than the two passes)."""
    if not isinstance(ref_out, torch.Tensor) or not ref_out.is_floating_point() or ref_out.numel() < 2:
        return None
    work = torch.float64 if ref_out.dtype == torch.float64 else torch.float32
    r = ref_out.detach().reshape(-1).to(work)
    if not all_finite(r):
        return None
    tol = tolerance_for(ref_out.dtype, tolerance)
    scale = min(cap, sum64(r, absolute=True) / r.numel())
    step = max(1, r.numel() // 4096)
    # the sample, then everything a chunk at a time (`sum64`'s why)
    parts = [slice(None, None, step)] + [slice(i, i + CHUNK) for i in range(0, r.numel(), CHUNK)]

    def fits(f: Callable[[slice], torch.Tensor]) -> bool:
        for part in parts:
            got, want = f(part), r[part]
            if not bool(((got - want).abs() <= tol * want.abs() + tol * scale).all()):
                return False
        return True

    c = sum64(r) / r.numel()
    if fits(lambda part: torch.full_like(r[part], c)):
        return f"a constant ({c:.4g})"
    for k, x in enumerate(inputs):
        if not (isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() == r.numel()):
            continue
        xs = x.detach().reshape(-1).to(work)
        sample = xs[::step].double()
        xx = float((sample * sample).sum())
        if not (math.isfinite(xx) and xx > 0):
            continue
        a = float((r[::step].double() * sample).sum()) / xx  # least squares on the sample
        if math.isfinite(a) and fits(lambda part, xs=xs, a=a: xs[part] * a):
            return f"{a:.4g} x input {k}"
    return None


ROUNDING_FACTOR = 4.0  # a float64 re-check allows this many times torch's own fp32 error on the case


def torch_rounding(ref32: torch.Tensor, ref64: torch.Tensor, cap: float = 1.0) -> float:
    """The largest error of torch's own float32 result against its float64 result, in the form of
    the strict tolerance: max |ref32 - ref64| / (|ref64| + min(cap, mean|ref64|)) over the elements finite
    in both (0.0 if none)."""
    r32, r64 = ref32.reshape(-1), ref64.reshape(-1)
    worst, abs_sum, finite_n = 0.0, 0.0, 0
    for i in range(0, r64.numel(), CHUNK):
        r = r64[i:i + CHUNK]
        fin = torch.isfinite(r)
        abs_sum += float(r.abs().where(fin, 0).sum(dtype=torch.float64))
        finite_n += int(fin.sum())
    if not finite_n:
        return 0.0
    scale = min(cap, abs_sum / finite_n)
    for i in range(0, r64.numel(), CHUNK):
        r, o = r64[i:i + CHUNK], r32[i:i + CHUNK].to(torch.float64)
        both = torch.isfinite(r) & torch.isfinite(o)
        if bool(both.any()):
            worst = max(worst, float(((o - r).abs() / (r.abs() + scale))[both].max()))
    return worst


# The re-check's measure of torch's rounding sees at least this many output values' rounding: an output of
# fewer values (a loss, a scalar) is also evaluated on ROUNDING_DRAWS - 1 inputs one ulp away (`rounding_draws`).
ROUNDING_VALUES = 64
MAX_ROUNDING_DRAWS = 16


def rounding_draws(n_out: int) -> int:
    """How many float32 evaluations the rounding measure takes for an output of `n_out` values: one (the
    case's own) where that is at least ROUNDING_VALUES values, else enough to see that many, at most
    MAX_ROUNDING_DRAWS. Why: torch's error on one value is one draw of its rounding, as random as the
    candidate's; for an honest scalar KL divergence on the shifted case (12,000 terms near 0.27 summing to
    2e-4) it was under a quarter of the candidate's on 4 draws in 20, and 4x of it refused an honest answer
    (verifier 24). The largest of many values' (or draws') errors is stable."""
    if n_out >= ROUNDING_VALUES:
        return 1
    return min(MAX_ROUNDING_DRAWS, -(-ROUNDING_VALUES // max(n_out, 1)))


def ulp_jitter(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """`x` with every nonzero value moved to one of its two float neighbours, each on a fair coin from
    `generator` (zeros stay: masks and structure keep; no value changes sign): the same inputs as far as
    float32 can tell, and another draw of every rounding an evaluation of them makes. A chunk of CHUNK
    values at a time into one copy (`sum64`'s why: one full-size tensor beside the input)."""
    y = x.clone(memory_format=torch.contiguous_format)
    flat = y.view(-1)
    for i in range(0, flat.numel(), CHUNK):
        part = flat[i:i + CHUNK]
        up = torch.rand(part.shape, generator=generator, device=part.device) < 0.5
        away = torch.nextafter(part, torch.where(up, torch.inf, -torch.inf).to(part.dtype))
        torch.where(part == 0, part, away, out=part)
    return y


def compare_rounded(out: torch.Tensor, ref32: torch.Tensor, ref64: torch.Tensor, tolerance: float | None = None,
                    cap: float = 1.0, ordered32: torch.Tensor | None = None, drawn: float = 0.0) -> Comparison | None:
    """The float64 re-check of a float32 output that failed `compare` against torch's float32 result:
    against the float64 reference, at ROUNDING_FACTOR x torch's own float32 error on these inputs
    (`torch_rounding`), never tighter than the strict tolerance nor looser than the loose one. None
    when torch's own error is within the strict tolerance (nothing to widen: the strict verdict
    stands). A large reduction on shifted inputs (LayerNorm of rows of 1024 values near 2000) rounds
    by more than 1e-4 in torch itself, and an honest two-pass kernel summing in another order failed.
    `ordered32`: the reference's float32 forward with every op rounding as float32 arithmetic does
    (`rounding.float32_order_forward`: the CPU's float64-accumulated scans in float32 running order),
    or None; `drawn`: the largest `torch_rounding` of torch's evaluations on inputs one ulp away
    (`rounding_draws`, `ulp_jitter`; 0.0 if none); torch's error is the largest of them all (verifier 24)."""
    strict = tolerance_for(ref32.dtype, tolerance)
    err = max(torch_rounding(ref32, ref64, cap), drawn)
    if ordered32 is not None and ordered32.shape == ref64.shape:
        err = max(err, torch_rounding(ordered32, ref64, cap))
    if ROUNDING_FACTOR * err <= strict:
        return None
    tol = min(max(LOOSE_TOL, strict), ROUNDING_FACTOR * err)
    cmp = compare(out, ref64, tol, cap)
    note = (f"against a float64 reference at {tol:.3g} ({ROUNDING_FACTOR:g}x torch's own float32 error here, "
            f"{err:.3g}): " + (cmp.note or "within it"))
    return Comparison(cmp.passed, cmp.passed_loose, cmp.max_abs_err, cmp.max_rel_err, note)
