"""Compaction: many small part files of a partition become one, duplicates resolved.

Covers rewriting each partition (run, family) that holds more than one part into a single part
(written under a temporary name and renamed), then deleting the parts it replaced. A crash between
the rename and the deletes leaves the rows twice, which reading resolves by evaluation id; a crash
before the rename leaves only a hidden temporary file. Parts that appear while compacting (a live
writer) are left alone for the next compaction. Does not change any row.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from kgym.records.layout import PART_SUFFIX, part_files
from kgym.records.reader import kept_positions, read_table
from kgym.records.schema import SCHEMA
from kgym.records.writer import write_table_atomically


@dataclass(frozen=True)
class CompactionResult:
    partitions: int  # partitions rewritten
    parts_before: int
    parts_after: int
    rows_before: int
    rows_after: int


def compact(path: str | Path, *, min_parts: int = 2) -> CompactionResult:
    """Compact every partition under `path` (a root, a run or one partition) with >= min_parts parts."""
    by_dir: dict[Path, list[Path]] = {}
    for f in part_files(path):
        by_dir.setdefault(f.parent, []).append(f)
    partitions = parts_before = parts_after = rows_before = rows_after = 0
    for folder, parts in sorted(by_dir.items()):
        parts_before += len(parts)
        if len(parts) < min_parts:
            parts_after += len(parts)
            continue
        table = pa.concat_tables([read_table(p) for p in parts])
        rows_before += table.num_rows
        keys = table.select(["evaluation_id", "outcome", "recorded_at"]).to_pandas()
        out = table.take(kept_positions(keys))
        out = out.cast(SCHEMA) if all(c.null_count == 0 for c, f in zip(out.columns, SCHEMA) if not f.nullable) else out
        rows_after += out.num_rows
        write_table_atomically(out, folder / f"part-compacted-{uuid.uuid4().hex[:8]}-000000{PART_SUFFIX}")
        for p in parts:
            p.unlink(missing_ok=True)
        partitions += 1
        parts_after += 1
    return CompactionResult(partitions, parts_before, parts_after, rows_before, rows_after)
