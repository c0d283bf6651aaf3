"""matmul family: C = A @ B and C = A @ B.T in FP32, with small and scaffold stages.

One reference and one solution file shared by both operations (they differ in B's layout, filled
through slots). The scaffold cuts out the K loop: the model is given the tile offsets and pointers
and writes the accumulation. `gemm_dims` also draws the shapes of gemm_epilogue and fused_hybrid.
Wrong answers: matmul drops the partial last K tile (floor instead of ceiling division), matmul_t
reads B with its strides untransposed (B treated as (K, N) row-major memory).
"""

from __future__ import annotations

import math
import random
from pathlib import Path

from kgym.tasks.operation import Operation
from kgym.tasks.shapes import Budget, dim, rows_cols

HERE = Path(__file__).parent
INT32_MAX = (1 << 31) - 1


def reduction_range(budget: Budget) -> tuple[int, int]:
    """The range of K for a GEMM whose output fills `budget`: 8-32 tiny, 32-256 small, 64-512 full.
    K stays at most 512: past that the fp32 summation-order difference between two correct GEMMs
    (cuBLAS and a tiled kernel) starts to exceed the 1e-4 tolerance on a few of 32M outputs."""
    hi = min(512, max(32, math.isqrt(budget.hi) // 4))
    return max(8, hi // 8), hi


def gemm_dims(rng: random.Random, budget: Budget) -> tuple[int, int, int]:
    """(M, N, K) with M*N in the budget, K in `reduction_range` and K <= N. K is odd, so the last K
    tile of any power-of-two tiling is partial and the tail mask is always exercised."""
    k_lo, k_hi = reduction_range(budget)
    K = dim(rng, k_lo, k_hi)
    if K % 2 == 0:
        K = K + 1 if K < k_hi else K - 1
    M, N = rows_cols(rng, budget, K, min(8192, 4 * math.isqrt(budget.hi)))
    return M, N, K


def int32_indexable(**tensors: int) -> str | None:
    """Why a shape set is impossible for kernels that index with int32 offsets, or None."""
    for name, numel in tensors.items():
        if numel > INT32_MAX:
            return f"{name} would hold {numel} elements; kernels index with int32 (at most {INT32_MAX})"
    return None


def shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    M, N, K = gemm_dims(rng, budget)
    return {"M": M, "N": N, "K": K}


def check(s: dict[str, int]) -> str | None:
    return int32_indexable(A=s["M"] * s["K"], B=s["K"] * s["N"], C=s["M"] * s["N"])


def _op(name: str, title: str, formula: str, b_dims: str, torch_expr: str, n_dim: str, b_strides: str,
        wrong_slots: dict[str, str]) -> Operation:
    return Operation(
        name=name, family="matmul", folder=HERE,
        description=f"C = {formula}, A: M x K, B: {b_dims.replace(', ', ' x ')}",
        reference="reference.py", solution="solution.py", wrong="solution.py", shapes=shapes, check=check,
        stages=("full", "small", "scaffold"),
        slots={"title": title, "formula": formula, "b_dims": b_dims, "torch_expr": torch_expr,
               "kernel": f"{name}_kernel", "n_dim": n_dim, "b_strides": b_strides,
               "k_tiles": "tl.cdiv(K, BLOCK_K)"},
        wrong_slots=wrong_slots)


OPERATIONS = [
    _op("matmul", "Matrix multiplication", "A @ B", "K, N", "torch.matmul(a, b)", "b.shape[1]",
        "b.stride(0), b.stride(1)",
        # floor division: the partial last K tile is never accumulated (K is always odd)
        wrong_slots={"k_tiles": "K // BLOCK_K"}),
    _op("matmul_t", "Matrix multiplication with B transposed", "A @ B.T", "N, K", "torch.matmul(a, b.T)",
        "b.shape[0]", "b.stride(1), b.stride(0)",
        # B's own strides: its memory read as a (K, N) matrix, the transpose forgotten; in bounds
        # because K <= N
        wrong_slots={"b_strides": "b.stride(0), b.stride(1)"}),
]
