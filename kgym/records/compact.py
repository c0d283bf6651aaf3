"""Compaction: many small part files of a partition become one, duplicates resolved.

Covers rewriting each partition (run, family) that holds more than one part into a single part
(written as the writer writes parts: `writer.write_part`, on any pyarrow filesystem), then deleting
the parts it replaced. A crash between
the rename and the deletes leaves the rows twice, which reading resolves by evaluation id; a crash
before the rename leaves only a hidden temporary file. Parts that appear while compacting (a live
writer) are left alone for the next compaction. Does not change any row.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from kgym.records.layout import PART_SUFFIX, Location, find_parts
from kgym.records.reader import kept_positions, read_table
from kgym.records.schema import SCHEMA
from kgym.records.writer import write_part


@dataclass(frozen=True)
class CompactionResult:
    partitions: int  # partitions rewritten
    parts_before: int
    parts_after: int
    rows_before: int
    rows_after: int


def compact(path: str | Path, *, min_parts: int = 2, filesystem: Any = None) -> CompactionResult:
    """Compact every partition under `path` (a root, a run or one partition; a local path or a URI)
    with >= min_parts parts."""
    by_dir: dict[str, list[Location]] = {}
    folders: dict[str, Location] = {}
    for f in find_parts(path, filesystem):
        folder = f.parent()
        folders[folder.path] = folder
        by_dir.setdefault(folder.path, []).append(f)
    partitions = parts_before = parts_after = rows_before = rows_after = 0
    for folder, parts in sorted(by_dir.items()):
        parts_before += len(parts)
        if len(parts) < min_parts:
            parts_after += len(parts)
            continue
        table = pa.concat_tables([read_table(p) for p in parts])  # a Location reads from its own filesystem
        rows_before += table.num_rows
        keys = table.select(["evaluation_id", "outcome", "recorded_at"]).to_pandas()
        out = table.take(kept_positions(keys))
        out = out.cast(SCHEMA) if all(c.null_count == 0 for c, f in zip(out.columns, SCHEMA) if not f.nullable) else out
        rows_after += out.num_rows
        write_part(out, folders[folder].join(f"part-compacted-{uuid.uuid4().hex[:8]}-000000{PART_SUFFIX}"))
        for p in parts:
            try:
                p.fs.delete_file(p.path)
            except FileNotFoundError:
                pass
        partitions += 1
        parts_after += 1
    return CompactionResult(partitions, parts_before, parts_after, rows_before, rows_after)
