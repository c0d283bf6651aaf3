"""The streaming Parquet writer: `RecordWriter(root, run_id, job_id).write(row)`, ROOT a local path
or a pyarrow filesystem URI (`file://`, `s3://`, `gs://`, `hdfs://`).

Covers buffering rows, flushing them to part files partitioned by run and family, and making a part
visible only when it is complete (`write_part`):
- a local filesystem: written under a dot-prefixed temporary name, fsynced, then renamed (an atomic
  step on POSIX) and the directory fsynced;
- an object store (S3, GCS): written straight to its final name. An object becomes visible only
  when its upload completes, whole; there is no rename (a "move" is a copy), and no fsync: a
  completed upload is durable. A writer killed mid-upload leaves no object (S3 may keep an
  incomplete multipart upload, invisible to readers, until a bucket lifecycle rule aborts it);
- any other filesystem (HDFS, pyarrow's mock): a temporary name, then `move`, which is atomic where
  the filesystem's rename is (HDFS).
A SIGKILL at any moment therefore leaves every visible file readable and loses at most the rows
not yet flushed; the farm delivers
at least once, so it re-sends those, and the duplicates that re-sending can create are resolved on
read by evaluation id (`reader.py`). Does not read, deduplicate or compact (`reader.py`,
`compact.py`). One writer per process; its calls are serialised by a lock.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from kgym.records.layout import PART_SUFFIX, Location, check_id, locate, safe_name
from kgym.records.schema import SCHEMA_VERSION, conform


def write_table_atomically(table: pa.Table, final: Path, compression: str = "zstd") -> Path:
    """Write `table` to `final` through a hidden temporary name in the same directory, then rename."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{final.name}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with open(tmp, "wb") as f:
            pq.write_table(table, f, compression=compression)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(final.parent)
    return final


def write_part(table: pa.Table, final: Location, compression: str = "zstd") -> Location:
    """Write `table` to `final` so that it is visible whole or not at all (see the module docstring)."""
    if final.local:
        write_table_atomically(table, Path(final.path), compression)
        return final
    parent = final.parent()
    parent.fs.create_dir(parent.path, recursive=True)  # on an object store a marker, or nothing
    if final.object_store:
        with final.fs.open_output_stream(final.path) as out:
            pq.write_table(table, out, compression=compression)
        return final
    tmp = parent.join(f".{final.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with tmp.fs.open_output_stream(tmp.path) as out:
            pq.write_table(table, out, compression=compression)
        final.fs.move(tmp.path, final.path)
    except BaseException:
        try:
            tmp.fs.delete_file(tmp.path)
        except OSError:
            pass
        raise
    return final


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class RecordWriter:
    """Buffers rows from `make_record` and flushes them as part files.

    A flush happens when `flush_rows` rows are buffered, when a write finds the oldest buffered row
    older than `flush_seconds` (an idle owner calls `flush_if_due()` on a timer), on `flush()` and on
    `close()`. Each flush writes one part per family present in the buffer.
    """

    def __init__(self, root: str | Path, run_id: str, job_id: str, *, flush_rows: int = 256,
                 flush_seconds: float = 30.0, compression: str = "zstd", filesystem: Any = None):
        if flush_rows < 1 or flush_seconds < 0:
            raise ValueError("need flush_rows >= 1 and flush_seconds >= 0")
        self.location = locate(root, filesystem)  # the records root
        self.run_id = check_id(run_id, "run id")
        self.job_id = check_id(job_id, "job id")
        self.flush_rows = flush_rows
        self.flush_seconds = flush_seconds
        self.compression = compression
        self.writer_id = uuid.uuid4().hex[:8]  # two writers of one job (a restart) never share a name
        self._buffer: list[dict[str, Any]] = []
        self._oldest: float | None = None
        self._seq = 0
        self._lock = threading.Lock()
        self._closed = False
        self.rows_written = 0  # rows in visible parts
        self.parts: list[Path | str] = []  # local Paths, or URIs
        self.run_location = self.location.join(self.run_id)
        self.run_location.fs.create_dir(self.run_location.path, recursive=True)

    @property
    def run_path(self) -> Path | str:
        """The run's directory: a local `Path`, or its URI."""
        return self.run_location.as_path_or_uri()

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def write(self, record: Mapping[str, Any]) -> list[Path | str]:
        """Take one row (a `make_record` dict); returns the parts a resulting flush made visible.
        A row that does not fit the schema is refused here, before it can spoil a buffer."""
        row = dict(record)
        for key in ("run_id", "job_id"):
            if row.get(key) not in (None, getattr(self, key)):
                raise ValueError(f"row has {key} {row[key]!r}, this writer writes {getattr(self, key)!r}")
        row.update(schema_version=SCHEMA_VERSION, run_id=self.run_id, job_id=self.job_id,
                   recorded_at=dt.datetime.now(dt.UTC))
        conform([row])  # validate now: a bad row raises to its sender, not at flush time
        with self._lock:
            if self._closed:
                raise ValueError("write to a closed RecordWriter")
            self._buffer.append(row)
            if self._oldest is None:
                self._oldest = time.monotonic()
            if len(self._buffer) >= self.flush_rows or self._due():
                return self._flush_locked()
        return []

    def _due(self) -> bool:
        return self._oldest is not None and time.monotonic() - self._oldest >= self.flush_seconds

    def flush_if_due(self) -> list[Path | str]:
        with self._lock:
            return self._flush_locked() if self._due() else []

    def flush(self) -> list[Path | str]:
        """Write every buffered row to visible parts; returns their paths."""
        with self._lock:
            return self._flush_locked()

    def _flush_locked(self) -> list[Path | str]:
        if not self._buffer:
            return []
        by_family: dict[str, list[dict[str, Any]]] = {}
        for row in self._buffer:
            by_family.setdefault(row["family"], []).append(row)
        written = []
        for family, rows in by_family.items():
            name = f"part-{self.job_id}-{self.writer_id}-{self._seq:06d}{PART_SUFFIX}"
            part = write_part(conform(rows), self.run_location.join(safe_name(family), name), self.compression)
            self._seq += 1
            written.append(part.as_path_or_uri())
            self.rows_written += len(rows)
            # Rows of a family already on disk leave the buffer, so a failure on the next family
            # never writes them twice.
            self._buffer = [r for r in self._buffer if r["family"] != family]
        self._oldest = None
        self.parts.extend(written)
        return written

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._flush_locked()
                self._closed = True

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
