"""Where records live on disk: ROOT/<run_id>/<family>/part-<job>-<writer>-<seq>.parquet.

Covers the directory and file names (partitioned by run, then by task family), which names are
safe, and which files count as visible parts. Temporary files start with a dot, so neither kgym nor
pyarrow/pandas (which skip dot- and underscore-prefixed names) ever read a half-written part.
Directories are plain names, not `key=value`: the columns are inside every file, and a hive-style
directory would make pyarrow infer a second, conflicting `family` column.
Does not write or read Parquet.
"""

from __future__ import annotations

import re
from pathlib import Path

PART_SUFFIX = ".parquet"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(value: str) -> str:
    """A path segment from an id: other characters become '_'; never empty, never hidden."""
    name = _SAFE.sub("_", str(value)).strip("._") or "_"
    return name


def check_id(value: str, what: str) -> str:
    """Run and job ids are used as path segments as they are: refuse ones that would be changed."""
    if not value or safe_name(value) != value:
        raise ValueError(f"{what} {value!r} must be non-empty, of letters, digits, '.', '_', '-', "
                         "and not start or end with '.' or '_'")
    return value


def run_dir(root: str | Path, run_id: str) -> Path:
    return Path(root) / check_id(run_id, "run id")


def partition_dir(root: str | Path, run_id: str, family: str) -> Path:
    return run_dir(root, run_id) / safe_name(family)


def is_visible_part(path: Path) -> bool:
    return path.is_file() and path.name.endswith(PART_SUFFIX) and not path.name.startswith((".", "_"))


def part_files(path: str | Path) -> list[Path]:
    """Visible part files under `path` (a part, a partition, a run or a root), in a stable order."""
    p = Path(path)
    if p.is_file():
        return [p] if p.name.endswith(PART_SUFFIX) else []
    if not p.is_dir():
        raise FileNotFoundError(f"no records at {str(p)!r}")
    return sorted((f for f in p.rglob("*" + PART_SUFFIX)
                   if is_visible_part(f) and not any(seg.startswith((".", "_")) for seg in f.relative_to(p).parts)),
                  key=lambda f: str(f))
