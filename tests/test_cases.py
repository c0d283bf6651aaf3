"""Gate 4's comparison and hidden-case seeds."""

import math

import pytest
import torch

from kgym.verify.parent import cases


def test_tolerance_is_scaled_by_magnitude():
    r = torch.randn(10_000, dtype=torch.float32)
    assert cases.compare(r * (1 + 5e-5), r).passed
    assert not cases.compare(r * (1 + 3e-4), r).passed
    small = r * 0.01
    # an absolute error of 5e-5 would pass KernelBench's atol on 0.01-scale values; not here
    assert not cases.compare(small + 5e-5, small).passed
    assert cases.compare(small + 5e-5, small).passed_loose


def test_nan_inf_where_reference_finite_fails_and_reference_nan_must_be_reproduced():
    r = torch.randn(100)
    o = r.clone()
    o[3] = float("inf")
    c = cases.compare(o, r)
    assert not c.passed and not c.passed_loose and "NaN/Inf" in c.note
    r2 = r.clone()
    r2[5] = float("nan")
    assert cases.compare(r2.clone(), r2).passed
    assert not cases.compare(r, r2).passed


def test_integer_outputs_compare_exactly():
    r = torch.arange(10)
    assert cases.compare(r.clone(), r).passed
    o = r.clone()
    o[0] = 1
    assert not cases.compare(o, r).passed


def test_mismatch_note_names_indices_and_values():
    r = torch.zeros(50) + 1.0
    o = r.clone()
    o[7] = 2.0
    c = cases.compare(o, r)
    assert "[7] got 2 want 1" in c.note and c.max_abs_err == 1.0


def test_case_seeds_depend_on_the_secret_and_the_case():
    a = cases.case_seed(b"s1", 0, "nominal")
    assert a == cases.case_seed(b"s1", 0, "nominal")
    assert a != cases.case_seed(b"s2", 0, "nominal")
    assert a != cases.case_seed(b"s1", 0, "x3")
    assert a != cases.case_seed(b"s1", 1, "nominal")


def test_transforms_apply_to_floating_inputs_only():
    def get_inputs():
        return [torch.randn(8), torch.arange(4), 7]

    names = dict(cases.CASES)
    for name, transform in cases.CASES:
        x, idx, k = cases.make_inputs(get_inputs, 123, transform, torch.device("cpu"))
        base = cases.make_inputs(get_inputs, 123, names["nominal"], torch.device("cpu"))[0]
        assert torch.equal(idx, torch.arange(4)) and k == 7
        shifted = base + 200 * float(base.abs().mean())
        if name == "rows":  # one row (a 1-D tensor): an affine map onto part of [-max|x|, max|x|]
            a = (x[1] - x[0]) / (base[1] - base[0])
            assert torch.allclose(x, x[0] + a * (base - base[0]), atol=1e-5) and a > 0
            assert float(x.abs().max()) <= float(base.abs().max())
            continue
        if name == "spike":  # one value x 2^12, the others as drawn
            hit = x != base
            assert int(hit.sum()) == 1 and torch.equal(x[hit], base[hit] * cases.SPIKE)
            continue
        expect = {"nominal": base, "x3": base * 3, "x0.01": base * 0.01, "negated": -base, "abs": base.abs(),
                  "shifted": shifted, "wide": base * 2.0 ** 17}[name]
        assert torch.allclose(x, expect)
    assert math.isclose(float(cases.STRICT_TOL), 1e-4)


def test_float64_is_compared_at_a_float64_tolerance():
    """Class 8: a float64 reference was judged at float32's 1e-4 (and both sides were cast to float32
    first), so float32 arithmetic passed a float64 task."""
    r = torch.randn(10_000, dtype=torch.float64)
    fp32_rounded = r.float().double()  # what computing in float32 leaves
    c = cases.compare(fp32_rounded, r)
    assert not c.passed and c.passed_loose, c.note
    honest = r * (1 + 1e-14)  # a float64 reordering of the same sums
    assert cases.compare(honest, r).passed
    assert cases.tolerance_for(torch.float64) == 1e-9
    assert cases.tolerance_for(torch.float32) == cases.STRICT_TOL
    assert cases.tolerance_for(torch.float16) == 1e-3


def test_a_declared_tolerance_replaces_the_dtype_tolerance():
    r = torch.randn(1000, dtype=torch.float64)
    off = r * (1 + 1e-6)
    assert not cases.compare(off, r).passed
    assert cases.compare(off, r, tolerance=1e-5).passed
    assert not cases.compare(r * (1 + 3e-4), r.float().double() * 0 + r, tolerance=1e-4).passed


def test_only_value_preserving_casts_are_copies():
    """The cast rule of kgym.verify.candidate.library (the guard applies it to every copy in forward)."""
    from kgym.verify.candidate.library import cast_problem, value_preserving

    f16, f32, f64, bf16 = torch.float16, torch.float32, torch.float64, torch.bfloat16
    for src, dst in [(f16, f32), (bf16, f32), (f32, f64), (torch.int8, f32), (torch.int16, f32),
                     (torch.int32, f64), (torch.uint8, f16), (torch.bool, f32), (torch.int8, torch.int64)]:
        assert value_preserving(src, dst), (src, dst)
    for src, dst in [(f32, torch.int32), (f32, f16), (f32, bf16), (f16, bf16), (f64, f32), (torch.int32, f32),
                     (torch.int64, torch.int32), (torch.int8, torch.uint8), (f32, torch.bool)]:
        assert not value_preserving(src, dst), (src, dst)
    x = torch.randn(4)
    assert cast_problem("_to_copy", (x,), {"dtype": f64}, x.double()) is None
    assert "changes values" in cast_problem("_to_copy", (x,), {"dtype": torch.int32}, x.int())
    assert "changes values" in cast_problem("copy_", (torch.empty(4, dtype=torch.int32), x), {}, None)
    assert "bit cast" in cast_problem("view", (x, torch.int32), {}, x.view(torch.int32))
    assert cast_problem("view", (x, f32), {}, x) is None


def test_the_shifted_case_moves_nonzero_values_and_keeps_zeros():
    x = torch.tensor([[1.0, 0.0], [-2.0, 3.0]])
    y = dict(cases.CASES)["shifted"](x)
    c = 200 * 1.5  # 200 x mean|x|
    assert torch.equal(y, torch.tensor([[1.0 + c, 0.0], [-2.0 + c, 3.0 + c]]))
    assert torch.equal(dict(cases.CASES)["shifted"](torch.zeros(3)), torch.zeros(3))


def test_the_rows_case_gives_each_row_its_own_factor_and_offset_within_the_draws_range():
    """Issue 29: every other case draws its elements i.i.d., so a statistic of the whole draw stood
    for a row's (test_iid_statistics_shortcut.py). Each row here is its own affine map of the draw's
    row (positive factor, own offset), inside the draw's range; zeros stay; shapes and dtypes kept."""
    torch.manual_seed(0)
    x = torch.rand(64, 3, 256)
    x[0, 0, :7] = 0.0
    y = dict(cases.CASES)["rows"](x)
    assert y.shape == x.shape and y.dtype == x.dtype and float(y.abs().max()) <= float(x.abs().max())
    assert torch.equal(y[0, 0, :7], torch.zeros(7))
    xs, ys = x.reshape(-1, 256)[1:], y.reshape(-1, 256)[1:]
    lo, hi = xs.amin(1, keepdim=True), xs.amax(1, keepdim=True)
    factor = (ys.amax(1, keepdim=True) - ys.amin(1, keepdim=True)) / (hi - lo)
    assert torch.allclose(ys, ys.amin(1, keepdim=True) + factor * (xs - lo), atol=1e-5)
    assert float(factor.max() / factor.min()) > 4  # factors over ~3 octaves
    means = ys.mean(1)
    assert float(means.max() - means.min()) > 1.0  # and offsets over the range: rows are not alike
    h = dict(cases.CASES)["rows"](torch.randn(5, 9, dtype=torch.float16))
    assert h.dtype == torch.float16 and bool(torch.isfinite(h).all())
    assert torch.equal(dict(cases.CASES)["rows"](torch.zeros(3, 4)), torch.zeros(3, 4))


def test_the_spike_case_multiplies_one_value_at_a_random_place():
    """Verifier 22: every other case is an affine image of the draw's i.i.d. values, row by row, so a
    sample of a row stood for it (tests/exploits/test_sampled_logsumexp.py). Here exactly one value is
    x 2^12, exact, at a place that differs from draw to draw; zeros stay, shapes and dtypes are kept,
    and the rest is the draw bit for bit."""
    torch.manual_seed(0)
    x = torch.rand(512, 1024) + 0.5
    spike = dict(cases.CASES)["spike"]
    y = spike(x)
    hit = y != x
    assert y.shape == x.shape and y.dtype == x.dtype and int(hit.sum()) == 1
    assert torch.equal(y[hit], x[hit] * 4096)
    assert len({int(torch.nonzero((spike(x) != x).flatten())) for _ in range(8)}) > 4  # places differ
    assert torch.equal(spike(torch.zeros(3, 4)), torch.zeros(3, 4))
    h = spike(torch.randn(5, 9, dtype=torch.bfloat16))
    assert h.dtype == torch.bfloat16 and bool(torch.isfinite(h).all())


def test_the_absolute_term_is_carried_to_the_cases_scale():
    """Issue 29: the absolute term was tol x min(1, mean|ref|), so at 2^17 an honest float32 GEMM's
    rounding near a cancelled sum failed it; with the case's cap (its mean|ref| over the nominal
    draw's) the bound of a case c times the nominal draw is c times the nominal draw's bound."""
    torch.manual_seed(0)
    a, b = torch.randn(64, 512) * 4, torch.randn(512, 48)
    nominal = a.double() @ b.double()
    for c in (1.0, 2.0 ** 17):
        ref = (nominal * c * c).float()
        cap = cases.case_cap(cases.mean_abs(ref), cases.mean_abs(nominal.float()))
        assert math.isclose(cap, max(1.0, c * c), rel_tol=1e-6)
        honest = (a * c) @ (b * c)  # float32, another summation order than float64
        assert cases.compare(honest, ref, cap=cap).passed
        assert cases.within(honest, ref, cap=cap)
        err = honest.double() - ref.double()
        off = honest.clone()
        k = int(ref.abs().argmin())
        off.view(-1)[k] += 3e-4 * c * c * min(1.0, float(nominal.abs().mean()))  # 3x the bound's absolute term
        assert not cases.compare(off, ref, cap=cap).passed and not cases.within(off, ref, cap=cap)
        if c > 1:  # the old cap at 1 refuses the honest product (values near a cancelled sum)
            assert not cases.compare(honest, ref).passed and float(err.abs().max()) > 1e-4
    assert cases.case_cap(None, 1.0) == cases.case_cap(2.0, 0.0) == cases.case_cap(0.5, 1.0) == 1.0


def _within_fuzz(device: str) -> None:
    """`within` against `compare` on outputs at the tolerance's edge, NaN and Inf on either side, every
    float dtype and a declared tolerance: it passes nothing compare fails, and defers only where a
    reference value is NaN or Inf."""
    gen = torch.Generator(device=device).manual_seed(0)
    agree = 0
    for trial in range(1200):
        dtype = (torch.float32, torch.float16, torch.bfloat16, torch.float64)[trial % 4]
        n = 1 + trial * 37 % 700
        ref = ((torch.rand(n, generator=gen, dtype=torch.float64, device=device) - 0.5)
               * 10.0 ** (trial % 8 - 4)).to(dtype)
        tol = cases.tolerance_for(dtype)
        out = ref.to(torch.float64).clone()  # a float64 ref's .to is itself
        mode = trial // 4 % 6
        noise = torch.rand(n, generator=gen, dtype=torch.float64, device=device)
        if mode == 1:  # within about 1.1x the tolerance, either side of the edge
            out = out + (noise - 0.5) * 2.2 * tol * (out.abs() + 1e-3)
        elif mode == 2:
            out[n // 2] = math.nan
        elif mode == 3:
            out[n // 2] = -math.inf
        elif mode == 4:  # the reference's own NaN, reproduced: compare passes it, within defers
            ref = ref.clone()
            ref[0] = math.nan
            out = ref.to(torch.float64).clone()
        elif mode == 5:
            out = out * (1 + tol * (2 * noise - 1))
        out = out.to(dtype)
        declared = 3e-4 if trial % 7 == 0 and dtype == torch.float32 else None
        cap = (1.0, 40.0)[trial % 3 == 0]
        fast, full = cases.within(out, ref, declared, cap), cases.compare(out, ref, declared, cap).passed
        assert not (fast and not full), (trial, dtype, mode)
        agree += fast == full
        if mode == 4:
            assert not fast
    assert agree == 1000  # it defers only where a reference value is NaN or Inf (mode 4)
    assert cases.within(torch.empty(0, device=device), torch.empty(0, device=device))
    x = torch.randn(cases.CHUNK + 5, generator=gen, device=device)  # two chunks on the CPU: the scale from both
    near = x * (1 + 0.5e-4)
    assert cases.within(near, x) == cases.compare(near, x).passed
    far = x.clone()
    far[-1] += 1.0
    assert not cases.within(far, x) and not cases.compare(far, x).passed


def test_within_passes_only_what_compare_passes():
    """`within`, the timed runs' fast comparison, is `compare`'s pass in fewer passes (on the CPU the
    same expressions element for element): True only where compare passes (False sends the output to
    compare)."""
    _within_fuzz("cpu")
    assert cases.within(torch.tensor([1, 2]), torch.tensor([1, 2])) and not cases.within(
        torch.tensor([1, 2]), torch.tensor([1, 3]))


@pytest.mark.gpu
def test_within_on_a_gpu_passes_only_what_compare_passes():
    """The fused kernel of `judge_kernel.py` (a margin instead of the same expressions): the same
    fuzz on CUDA tensors; and an output that is entirely subnormal is left to compare."""
    _within_fuzz("cuda")
    tiny = torch.full((1000,), 1e-39, device="cuda")
    assert not cases.within(tiny, tiny) and cases.compare(tiny, tiny).passed


def _compare_fuzz(device: str, monkeypatch) -> None:
    """`compare` (whose passing, all-finite verdicts come from `_compare_finite`) against
    `_compare_chunks`, the chunk-by-chunk comparison it was before: the same Comparison, field for
    field (pass, loose pass, largest errors, note), on outputs at the tolerance's edge, NaN and Inf
    on either side, overflowing differences, every float dtype, a declared tolerance, several chunks."""
    monkeypatch.setattr(cases, "CHUNK", 97)  # several chunks per output: the scale and maxima across them
    gen = torch.Generator(device=device).manual_seed(1)
    fast = 0
    for trial in range(1400):
        dtype = (torch.float32, torch.float16, torch.bfloat16, torch.float64)[trial % 4]
        n = 1 + trial * 53 % 450
        ref = ((torch.rand(n, generator=gen, dtype=torch.float64, device=device) - 0.5)
               * 10.0 ** (trial % 8 - 4)).to(dtype)
        tol = cases.tolerance_for(dtype)
        out = ref.to(torch.float64).clone()
        mode = trial // 4 % 7
        noise = torch.rand(n, generator=gen, dtype=torch.float64, device=device)
        if mode == 1:  # within about 1.1x the tolerance, either side of the edge
            out = out + (noise - 0.5) * 2.2 * tol * (out.abs() + 1e-3)
        elif mode == 2:
            out[n // 2] = math.nan
        elif mode == 3:
            out[-1] = -math.inf
        elif mode == 4:  # the reference's own NaN or Inf, reproduced or not
            ref = ref.clone()
            ref[0] = math.nan if trial % 8 < 4 else math.inf
            out = ref.to(torch.float64).clone()
            if trial % 3 == 0:
                out[0] = 1.0
        elif mode == 5:
            out = out * (1 + tol * (2 * noise - 1))
        elif mode == 6 and dtype == torch.float32:  # |out - ref| overflows float32 with both finite
            ref = ref.clone()
            ref[0], out[0] = 3e38, -3e38
        out = out.to(dtype)
        declared = 3e-4 if trial % 7 == 0 and dtype == torch.float32 else None
        cap = (1.0, 40.0)[trial % 3 == 0]
        got = cases.compare(out, ref, declared, cap)
        assert got == cases._compare_chunks(out.reshape(-1), ref.reshape(-1), declared, cap), (trial, dtype, mode)
        fast += cases._compare_finite(out.reshape(-1), ref.reshape(-1), declared, cap) is not None
    assert 300 < fast < 1400  # both paths were taken


def test_compare_is_the_chunked_comparison(monkeypatch):
    _compare_fuzz("cpu", monkeypatch)


@pytest.mark.gpu
def test_compare_on_a_gpu_is_the_chunked_comparison(monkeypatch):
    _compare_fuzz("cuda", monkeypatch)


def _seeded_draws(device: str, seed_with) -> list[torch.Tensor]:
    out = []
    for seed in (0, 12345, (1 << 63) - 1):
        seed_with(seed)
        with torch.device(device):
            out += [torch.rand(5), torch.randn(3), torch.randint(0, 10, (4,)), torch.rand(2).cpu()]
    return out


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_case_seeds_draw_what_torch_manual_seed_draws(device):
    """`seed_generators`, the draws' cheaper torch.manual_seed, leaves the generators a draw uses as
    torch.manual_seed does."""
    new = _seeded_draws(device, cases.seed_generators)
    old = _seeded_draws(device, torch.manual_seed)
    assert all(torch.equal(a, b) for a, b in zip(new, old))


def test_the_fused_input_check_passes_only_identical_bytes(tmp_path):
    """`judge_kernel.identical_words` (the GPU's first pass of `cases.unchanged`), run under Triton's
    interpreter on CPU tensors: equal only where every word is; a NaN payload, a signed zero or one
    flipped bit in the last word of the last block differs (then `bitwise.same` decides)."""
    import subprocess
    import sys

    script = tmp_path / "words.py"
    script.write_text(
        "import torch\n"
        "from kgym.verify.parent import judge_kernel as j\n"
        "x = torch.randn(3 * j.BLOCK + 7)\n"
        "w = lambda t: t.view(torch.int32)\n"
        "assert j.identical_words(w(x), w(x.clone()))\n"
        "for k in (0, j.BLOCK, x.numel() - 1):\n"
        "    y = x.clone(); w(y)[k] ^= 1\n"
        "    assert not j.identical_words(w(y), w(x)), k\n"
        "z = torch.zeros(9); assert not j.identical_words(w(-z), w(z))\n"
        "b = torch.arange(13, dtype=torch.uint8); c = b.clone(); c[12] = 0\n"
        "assert j.identical_words(b, b.clone()) and not j.identical_words(b, c)\n"
        "print('ok')\n")
    import os
    from pathlib import Path

    root = str(Path(__file__).resolve().parent.parent)  # this checkout's kgym, not an installed one
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": root}
    out = subprocess.run([sys.executable, "-P", str(script)], env=env, capture_output=True, text=True,
                         timeout=300, cwd=root)
    assert out.stdout.strip().endswith("ok"), out.stderr[-3000:]


def test_the_fused_comparison_decides_as_within_on_the_cpu(tmp_path):
    """`judge_kernel.within_fused` (the GPU's fast comparison, `within_cuda` without the device switch),
    under Triton's interpreter on CPU tensors, against `cases.within` (the CPU's expressions) and
    `compare`: it passes nothing compare fails, with and without a case's cap, and decides as `within`
    away from the bound's edge (its margin, 2^-16 of the bound, leaves the edge to compare)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "fused.py"
    script.write_text(
        "import math, torch\n"
        "from kgym.verify.parent import cases, judge_kernel as j\n"
        "g = torch.Generator().manual_seed(0)\n"
        "same = edge = 0\n"
        "for trial in range(240):\n"
        "    dtype = (torch.float32, torch.float16, torch.float64)[trial % 3]\n"
        "    n = 1 + trial * 997 % (2 * j.BLOCK + 9)\n"
        "    ref = ((torch.rand(n, generator=g, dtype=torch.float64) - 0.5) * 10.0 ** (trial % 8 - 3)).to(dtype)\n"
        "    tol = cases.tolerance_for(dtype)\n"
        "    cap = (1.0, 2.0 ** 17, 40.0)[trial // 3 % 3]\n"
        "    noise = torch.rand(n, generator=g, dtype=torch.float64)\n"
        "    out = ref.double() + (noise - 0.5) * (0.5, 2.2, 4.0)[trial // 9 % 3] * tol * (ref.double().abs() + 1e-3)\n"
        "    if trial % 11 == 0: out[n // 2] = math.nan\n"
        "    out = out.to(dtype)\n"
        "    fused = j.within_fused(out, ref, tol, cap)\n"
        "    cpu, full = cases.within(out, ref, None, cap), cases.compare(out, ref, None, cap).passed\n"
        "    assert not (fused and not full), trial\n"
        "    same += fused == cpu\n"
        "print(same, 'ok')\n")
    root = str(Path(__file__).resolve().parent.parent)  # this checkout's kgym, not an installed one
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": root}
    out = subprocess.run([sys.executable, "-P", str(script)], env=env, capture_output=True, text=True,
                         timeout=600, cwd=root)
    assert out.stdout.strip().endswith("ok"), out.stderr[-3000:]
    assert int(out.stdout.split()[-2]) >= 236, out.stdout  # the same decision but at the edge


@pytest.mark.gpu
def test_unchanged_on_a_gpu_is_bitwise_same():
    """`cases.unchanged` on CUDA tensors (the fused pass, then `bitwise.same`) against `bitwise.same`:
    equal copies, a flipped bit, NaN payloads in both, signed zeros, odd byte counts, bool, strided."""
    from kgym.verify.bitwise import same

    x = torch.randn(4096 * 3 + 5, device="cuda")
    nan_a = torch.full((7,), math.nan, device="cuda")
    nan_b = nan_a.view(torch.int32).add(1).view(torch.float32)
    pairs = [(x, x.clone()), (-torch.zeros(9, device="cuda"), torch.zeros(9, device="cuda")),
             (nan_a, nan_b), (torch.arange(13, dtype=torch.uint8, device="cuda"),) * 2,
             (torch.tensor([True, False, True], device="cuda"),) * 2, (x[::2], x[::2].clone())]
    y = x.clone()
    y.view(torch.int32)[-1] ^= 1
    pairs.append((y, x))
    for a, b in pairs:
        assert cases.unchanged(a, b) == same(a, b)
    assert not cases.unchanged(y, x) and cases.unchanged(nan_a, nan_b)


def test_the_wide_case_judges_range_not_rounding():
    """RANGE_CASES take RANGE_TOL (or a looser declared tolerance): rounding of an output's own scale's
    thousandths passes there and fails the other cases; NaN, Inf, or an element off by its own size
    fails there too (what range-limited arithmetic gives: the softmax and fp16 exploits' NaN/Inf)."""
    assert cases.case_tolerance("nominal", None) is None and cases.case_tolerance("rows", 1e-3) == 1e-3
    assert cases.case_tolerance("wide", None) == cases.RANGE_TOL == 0.1
    assert cases.case_tolerance("wide", 0.3) == 0.3
    g = torch.Generator().manual_seed(0)
    ref = torch.randn(64, 256, generator=g)
    rounded = ref + 3e-3 * torch.randn(64, 256, generator=g)
    wide = cases.case_tolerance("wide", None)
    assert cases.compare(rounded, ref, wide).passed and cases.within(rounded, ref, wide)
    assert not cases.compare(rounded, ref, cases.case_tolerance("shifted", None)).passed
    for broken in (float("nan"), float("inf")):
        bad = ref.clone()
        bad[3, 7] = broken
        assert not cases.compare(bad, ref, wide).passed and not cases.within(bad, ref, wide)
    off = ref.clone()
    off[5, 9] += 1.0 + ref[5, 9].abs()  # off by more than its own size
    assert not cases.compare(off, ref, wide).passed and not cases.within(off, ref, wide)
