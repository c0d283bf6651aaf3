"""Where records live: ROOT/<run_id>/<family>/part-<job>-<writer>-<seq>.parquet, ROOT being a local
path or any pyarrow filesystem URI (`file://`, `s3://`, `gs://`, `hdfs://`).

Covers resolving a root to a filesystem and a path in it (`locate`), the directory and file names
(partitioned by run, then by task family), which names are safe, and which files count as visible
parts (`find_parts`). Temporary files start with a dot, so neither kgym nor
pyarrow/pandas (which skip dot- and underscore-prefixed names) ever read a half-written part.
Directories are plain names, not `key=value`: the columns are inside every file, and a hive-style
directory would make pyarrow infer a second, conflicting `family` column.
Does not write or read Parquet.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs

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


def part_files(path: str | Path) -> list[Path | str]:
    """Visible part files under `path` (a part, a partition, a run or a root), in a stable order:
    local `Path`s, or URIs on another filesystem (`find_parts` gives `Location`s)."""
    return [p.as_path_or_uri() for p in find_parts(path)]


# Object stores: an object appears whole when its upload completes, and "rename" is a copy.
OBJECT_STORES = frozenset({"s3", "gcs"})


def is_uri(where: str | Path) -> bool:
    return isinstance(where, str) and "://" in where


@dataclass(frozen=True)
class Location:
    """A place in a filesystem: `fs` (a pyarrow FileSystem) and `path` in its terms. `uri_root` and
    `root_path` remember the URI it was located from, so `uri` shows it the way the user wrote it."""

    fs: Any
    path: str
    uri_root: str = ""  # the URI given to `locate` ("" for a plain local path or a given filesystem)
    root_path: str = ""  # its path in `fs`

    @property
    def local(self) -> bool:
        return self.fs.type_name == "local"

    @property
    def object_store(self) -> bool:
        return self.fs.type_name in OBJECT_STORES

    @property
    def uri(self) -> str:
        """What to show a user: the absolute local path, or the URI of this place."""
        if not self.uri_root or not self.path.startswith(self.root_path):
            return self.path
        return self.uri_root.rstrip("/") + "/" + self.path[len(self.root_path):].lstrip("/") \
            if self.path != self.root_path else self.uri_root

    def join(self, *parts: str) -> Location:
        return Location(self.fs, posixpath.join(self.path, *parts), self.uri_root, self.root_path)

    def parent(self) -> Location:
        return Location(self.fs, posixpath.dirname(self.path.rstrip("/")), self.uri_root, self.root_path)

    @property
    def name(self) -> str:
        return posixpath.basename(self.path.rstrip("/"))

    def as_path_or_uri(self) -> Path | str:
        """A local `Path` for local places (what callers of the local-only API got), else the URI."""
        return Path(self.path) if self.local else self.uri

    def exists(self) -> bool:
        return self.fs.get_file_info(self.path).type != pafs.FileType.NotFound


def locate(where: str | Path | Location, filesystem: Any = None) -> Location:
    """`where` as a Location: a local path (made absolute), or a URI through
    `pyarrow.fs.FileSystem.from_uri`; with `filesystem`, `where` is a path inside it."""
    if isinstance(where, Location):
        return where
    if filesystem is not None:
        return Location(filesystem, str(where))
    if is_uri(where):
        fs, path = pafs.FileSystem.from_uri(str(where))
        return Location(fs, path, str(where), path)
    return Location(pafs.LocalFileSystem(), os.path.abspath(os.fspath(where)))


def run_location(root: str | Path | Location, run_id: str, filesystem: Any = None) -> Location:
    return locate(root, filesystem).join(check_id(run_id, "run id"))


def _visible(rel: str) -> bool:
    return rel.endswith(PART_SUFFIX) and not any(seg.startswith((".", "_")) for seg in rel.split("/"))


def find_parts(where: str | Path | Location, filesystem: Any = None) -> list[Location]:
    """Visible part files under `where` (a part, a partition, a run or a root), in a stable order."""
    loc = locate(where, filesystem)
    info = loc.fs.get_file_info(loc.path)
    if info.type == pafs.FileType.File:
        return [loc] if loc.path.endswith(PART_SUFFIX) else []
    if info.type != pafs.FileType.Directory:
        raise FileNotFoundError(f"no records at {loc.uri!r}")
    base = loc.path.rstrip("/")
    found = []
    for f in loc.fs.get_file_info(pafs.FileSelector(base, recursive=True)):
        if f.type == pafs.FileType.File:
            rel = f.path[len(base):].lstrip("/") if f.path.startswith(base) else f.base_name
            if _visible(rel):
                found.append(Location(loc.fs, f.path, loc.uri_root, loc.root_path))
    return sorted(found, key=lambda p: p.path)
