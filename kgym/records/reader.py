"""Reading records back: `load(path)` -> pandas DataFrame, one row per evaluation id.

Covers finding the visible parts under a path or URI (a part file, a partition, a run, or a root
holding several runs; any pyarrow filesystem, see `layout.locate`), bringing parts of older schema
versions to the current one (missing columns read as null), and resolving duplicate evaluation ids:
the at-least-once farm may deliver one evaluation
more than once. The row kept is the first one that is not a kgym error (a failure of kgym is
retried and never stands for the kernel's verdict when a real verdict exists), earliest
`recorded_at` first, then file order. `load` also joins the baselines table found under the same
path (`baseline_table.py`: torch.compile figures measured after their verdicts) onto the rows. Does not
summarise (`replay.py`) or rewrite files (`compact.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from kgym.records.layout import find_parts
from kgym.records.schema import SCHEMA


def _to_current(table: pa.Table) -> pa.Table:
    columns = []
    for field in SCHEMA:
        if field.name in table.column_names:
            columns.append(table.column(field.name).cast(field.type))
        else:
            columns.append(pa.nulls(table.num_rows, type=field.type))
    # Nullability is a writer's promise, not a reader's: old parts may lack a column now required.
    return pa.Table.from_arrays(columns, schema=pa.schema([f.with_nullable(True) for f in SCHEMA]))


def read_table(path: str | Path, filesystem: Any = None) -> pa.Table:
    """Every visible row under `path` (a local path or a URI; or a path in `filesystem`), duplicates
    included, as one Arrow table of the current schema."""
    tables = [_to_current(pq.read_table(f.path, filesystem=f.fs)) for f in find_parts(path, filesystem)]
    if not tables:
        return pa.Table.from_arrays([pa.array([], type=f.type) for f in SCHEMA],
                                    schema=pa.schema([f.with_nullable(True) for f in SCHEMA]))
    return pa.concat_tables(tables)


def kept_positions(df: pd.DataFrame) -> list[int]:
    """Positions of the rows that stand for their evaluation id (rule in the module docstring)."""
    order = pd.DataFrame({"is_error": df["outcome"].eq("error").to_numpy(),
                          "recorded_at": df["recorded_at"].to_numpy(), "pos": range(len(df)),
                          "evaluation_id": df["evaluation_id"].to_numpy()})
    order = order.sort_values(["is_error", "recorded_at", "pos"], kind="stable")
    return sorted(order.loc[~order["evaluation_id"].duplicated(keep="first"), "pos"].tolist())


def dedupe(df: pd.DataFrame) -> pd.DataFrame:
    """One row per evaluation id, in file order."""
    return df.iloc[kept_positions(df)].reset_index(drop=True) if len(df) else df


def load(path: str | Path, *, deduplicate: bool = True, filesystem: Any = None,
         baselines: bool = True) -> pd.DataFrame:
    """The records under `path` (a local path or a URI) as a DataFrame (columns: `schema.COLUMNS`;
    with `baselines`, the run's baselines table joined on, plus `eager_from` and `compile_from`:
    see `baseline_table.join_baselines`)."""
    df = read_table(path, filesystem).to_pandas()
    df = dedupe(df) if deduplicate else df
    if baselines:
        from kgym.records.baseline_table import join_baselines, load_baselines

        df = join_baselines(df, load_baselines(path, filesystem))
    return df
