"""Scan family: inclusive cumulative sums (torch.cumsum) along the rows or the columns of a
(batch_size, dim) tensor.

Both operations share one reference and one strided solution (which axis is scanned is a stride).
The scanned length is kept short on purpose. A prefix sum of zero-mean inputs passes through ~0 at
many positions, where the tolerance is 1e-4 absolute, while fp32 rounding accumulates along the scan:
simulated over 16M elements at the worst hidden scale (randn * 4, x3), a tiled tree scan and a
CUDA-style chunked scan differ by 0.6 of the tolerance at 256 values and 0.9 at 512; a fully serial
fp32 scan (what torch does down columns on CUDA, what Triton's interpreter does for tl.cumsum, and
the natural column kernel) is off the exact prefix sums by 0.4 of it at 64 values, 0.9 at 128 and
1.5-1.8 at 256. Hence rows <= 128 and columns <= 64 scanned values.
Does not cover exclusive or reverse scans, nor other associative operators.
"""

from __future__ import annotations

import random
from pathlib import Path

from kgym.tasks.operation import Operation
from kgym.tasks.shapes import Budget, rows_cols

HERE = Path(__file__).parent
ROW_MAX_LEN = 128  # longest row scan whose fp32 rounding stays inside the tolerance, serial or tree
COL_MAX_LEN = 64  # columns are scanned serially by torch on CUDA: shorter still


def _row_shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    batch_size, dim = rows_cols(rng, budget, 3, ROW_MAX_LEN)
    return {"batch_size": batch_size, "dim": dim}


def _col_shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    dim, batch_size = rows_cols(rng, budget, 3, COL_MAX_LEN)
    return {"batch_size": batch_size, "dim": dim}


def _cap(axis_name: str, max_len: int):
    def check(shapes: dict[str, int]) -> str | None:
        if shapes[axis_name] > max_len:
            return (f"{axis_name}={shapes[axis_name]} is scanned; beyond {max_len} values fp32 rounding "
                    "along the scan alone moves prefix sums near zero past the 1e-4 tolerance")
        return None
    return check


def _op(name: str, title: str, dim: int, shapes, check, scan: str, wrong_scan: str) -> Operation:
    return Operation(
        name=name, family="scan", folder=HERE, description=f"inclusive cumulative sum along dim {dim}",
        reference="reference.py", solution="solution.py", wrong="solution.py", shapes=shapes, check=check,
        slots={"title": title, "axis": str(dim), "kernel": f"{name}_kernel", "scan": scan},
        wrong_slots={"scan": wrong_scan})


OPERATIONS = [
    # exclusive where torch's cumsum is inclusive: every output one element behind
    _op("row_cumsum", "Row cumulative sum", 1, _row_shapes, _cap("dim", ROW_MAX_LEN),
        scan="tl.cumsum(x, axis=1)", wrong_scan="tl.cumsum(x, axis=1) - x"),
    # Columns walk the scan one row at a time (tiles one element long along the scan, so the tile's
    # prefix sum is the element itself and the carry does the scan): a tl.cumsum across the strided
    # axis of a [256, 16] tile failed to compile with triton 3.6 on the H200. Scans are <= 64 long.
    # The wrong answer scans across its lines (neighbouring columns) instead of down them: the
    # mix-up of a tile laid out transposed to the one the model pictured.
    _op("col_cumsum", "Column cumulative sum", 0, _col_shapes, _cap("batch_size", COL_MAX_LEN),
        scan="x", wrong_scan="tl.cumsum(x, axis=0)"),
]
