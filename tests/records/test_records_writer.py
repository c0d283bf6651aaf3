"""The writer: parts by run and family that appear whole or not at all; duplicates resolved on
read; compaction; older schema versions; a SIGKILL at any moment leaves every visible file readable."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from kgym.records import RecordWriter, compact, load, make_record, read_table
from kgym.records.layout import part_files

from records_helpers import REPO, task, verdict


def rows(n: int, families=("relu", "softmax"), kind="passed"):
    return [make_record(task=task(families[i % len(families)], seed=i), candidate_source=f"src {i}",
                        verdict=verdict(kind)) for i in range(n)]


def test_parts_are_partitioned_by_run_and_family_and_readable_by_any_parquet_tool(tmp_path: Path):
    w = RecordWriter(tmp_path, run_id="run-1", job_id="job-a", flush_rows=4)
    flushed = [w.write(r) for r in rows(4)]
    assert flushed[:3] == [[], [], []] and len(flushed[3]) == 2  # one part per family, at the 4th row
    assert {p.parent.name for p in flushed[3]} == {"relu", "softmax"}
    assert all(p.parent.parent == tmp_path / "run-1" for p in flushed[3])
    for r in rows(6)[4:]:
        w.write(r)
    assert w.buffered == 2 and len(load(tmp_path / "run-1")) == 4  # the buffer is not visible
    w.close()
    assert len(part_files(tmp_path)) == 4 and w.rows_written == 6
    assert len(pd.read_parquet(tmp_path / "run-1")) == 6  # pandas/pyarrow read the run directory as it is
    assert len(pq.read_table(part_files(tmp_path)[0])) in (1, 2)
    df = load(tmp_path)
    assert sorted(df["family"].unique()) == ["relu", "softmax"]
    assert set(df["run_id"]) == {"run-1"} and set(df["job_id"]) == {"job-a"}
    assert str(df["recorded_at"].dt.tz) == "UTC"


def test_flush_after_seconds_and_on_demand(tmp_path: Path):
    w = RecordWriter(tmp_path, run_id="r", job_id="j", flush_rows=100, flush_seconds=0.2)
    a, b = rows(2, families=("relu",))
    assert w.write(a) == [] and w.flush_if_due() == []
    time.sleep(0.25)
    assert len(w.flush_if_due()) == 1
    w.write(b)
    time.sleep(0.25)
    assert len(w.write(make_record(task=task(seed=9), candidate_source="c", verdict=verdict()))) == 1
    assert w.flush() == [] and len(load(tmp_path)) == 3
    w.close()
    with pytest.raises(ValueError, match="closed"):
        w.write(a)


def test_hidden_temporary_files_are_never_read(tmp_path: Path):
    with RecordWriter(tmp_path, run_id="r", job_id="j") as w:
        for r in rows(3):
            w.write(r)
    part = part_files(tmp_path)[0]
    (part.parent / f".{part.name}.deadbeef.tmp").write_bytes(b"PAR1 half a file")
    (part.parent / ".part-j-x-000009.parquet").write_bytes(b"PAR1 half a file")
    assert len(load(tmp_path)) == 3 and len(pd.read_parquet(tmp_path / "r")) == 3


def test_bad_rows_and_ids_are_refused_before_they_reach_a_file(tmp_path: Path):
    with pytest.raises(ValueError, match="run id"):
        RecordWriter(tmp_path, run_id="../escape", job_id="j")
    w = RecordWriter(tmp_path, run_id="r", job_id="j")
    good = rows(1)[0]
    with pytest.raises(ValueError, match="may not be null"):
        w.write(dict(good, candidate_source=None))
    with pytest.raises(ValueError, match="run_id"):
        w.write(dict(good, run_id="other"))
    w.write(good)
    w.close()
    assert len(load(tmp_path)) == 1


def test_duplicate_evaluation_ids_are_resolved_on_read(tmp_path: Path):
    """An at-least-once farm re-sends: the same evaluation from a restarted writer, and once as a kgym
    error. One row per id comes back; a real verdict wins over kgym's failure."""
    err = make_record(task=task(), candidate_source="same", verdict=verdict("error"))
    real = make_record(task=task(), candidate_source="same", verdict=verdict("passed"))
    assert err["evaluation_id"] == real["evaluation_id"]
    for r in (err, real, real):
        with RecordWriter(tmp_path, run_id="r", job_id="j") as w:  # a fresh writer per delivery
            w.write(r)
            w.write(make_record(task=task(seed=5), candidate_source="other", verdict=verdict("correctness")))
    assert len(load(tmp_path, deduplicate=False)) == 6
    df = load(tmp_path)
    assert len(df) == 2 and df["evaluation_id"].is_unique
    assert df.set_index("evaluation_id").loc[real["evaluation_id"], "outcome"] == "passed"


def test_compaction_merges_parts_keeps_rows_and_resolves_duplicates(tmp_path: Path):
    for _ in range(3):
        with RecordWriter(tmp_path, run_id="r", job_id="j", flush_rows=2) as w:
            for r in rows(5):
                w.write(r)
    before = load(tmp_path)
    assert len(part_files(tmp_path)) == 3 * 5 and len(load(tmp_path, deduplicate=False)) == 15
    result = compact(tmp_path / "r")
    assert result.partitions == 2 and result.parts_after == 2 and (result.rows_before, result.rows_after) == (15, 5)
    after = load(tmp_path)
    key = ["evaluation_id"]
    pd.testing.assert_frame_equal(before.sort_values(key).reset_index(drop=True),
                                  after.sort_values(key).reset_index(drop=True))
    assert compact(tmp_path).partitions == 0  # idempotent
    p = subprocess.run([sys.executable, "-m", "kgym.cli", "compact", str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 0 and "0 partition(s)" in p.stdout


def test_parts_of_an_older_schema_read_with_nulls(tmp_path: Path):
    with RecordWriter(tmp_path, run_id="r", job_id="j") as w:
        w.write(rows(1)[0])
    part = part_files(tmp_path)[0]
    old = pq.read_table(part).drop_columns(["turn", "gpu_name"])  # as a version without them wrote it
    pq.write_table(old, part.parent / "part-old-0-000000.parquet")
    table = read_table(tmp_path)
    assert table.num_rows == 2 and table.column("turn").null_count == 2


CRASH_KILLS = 3


def test_sigkill_at_any_moment_leaves_every_visible_part_readable(tmp_path: Path):
    """A writer process is SIGKILLed at several moments; every visible file reads, no row of a
    reported flush is lost, and the rows seen are exactly whole flushes."""
    root = tmp_path / "records"
    acked = 0
    for k in range(CRASH_KILLS):
        proc = subprocess.Popen([sys.executable, str(Path(__file__).parent / "records_helpers.py"), str(root), "3000"],
                                stdout=subprocess.PIPE, text=True, cwd=REPO,
                                env=dict(os.environ, PYTHONPATH=str(REPO)))
        last = 0
        deadline = time.monotonic() + 60
        while last < 6 + 3 * k:  # let it flush a few times; kill points move with k
            line = proc.stdout.readline()
            assert line, "the writer process ended early"
            last = int(line)
            assert time.monotonic() < deadline
        time.sleep(0.013 * k)  # land the kill at different points of the next write
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        acked += last
        for part in part_files(root):
            pq.read_table(part)  # every visible file is whole
        total = len(load(root, deduplicate=False))
        assert total >= acked
    names = [p.name for p in root.rglob("*")]
    assert all(n.endswith(".parquet") or n.startswith(".") or n in ("crash", "relu", "softmax") for n in names)


def test_a_file_uri_root_writes_reads_and_compacts_like_a_path(tmp_path: Path):
    uri = (tmp_path / "uri-root").as_uri()  # file:///...
    with RecordWriter(uri, run_id="r", job_id="j", flush_rows=2) as w:
        for r in rows(5):
            w.write(r)
    assert w.run_path == tmp_path / "uri-root" / "r"  # a local place comes back as a Path
    assert len(load(f"{uri}/r")) == 5 and len(load(tmp_path / "uri-root" / "r")) == 5
    assert len(part_files(f"{uri}/r")) == 5 and compact(uri).rows_after == 5
    assert len(part_files(f"{uri}/r")) == 2 and len(load(uri)) == 5


@pytest.mark.parametrize("object_store", [False, True], ids=["rename", "object-store"])
def test_any_pyarrow_filesystem_with_or_without_rename(tmp_path: Path, monkeypatch, object_store: bool):
    """pyarrow's in-memory filesystem stands for HDFS (temporary name, then move) and, declared an
    object store, for S3/GCS (each part written once, straight to its final name)."""
    import pyarrow.fs as pafs

    from kgym.records import layout

    fs = pafs._MockFileSystem()
    if object_store:
        monkeypatch.setattr(layout, "OBJECT_STORES", frozenset({"mock"}))
    with RecordWriter("bucket/records", run_id="r", job_id="j", flush_rows=3, filesystem=fs) as w:
        for r in rows(7):
            w.write(r)
    assert isinstance(w.run_path, str)
    names = [f.path for f in fs.get_file_info(pafs.FileSelector("bucket", recursive=True))
             if f.type == pafs.FileType.File]
    assert len(names) == 5 and all(n.endswith(".parquet") and "/." not in n for n in names)  # no temporaries left
    df = load("bucket/records/r", filesystem=fs)
    assert len(df) == 7 and sorted(df["family"].unique()) == ["relu", "softmax"]
    assert compact("bucket/records", filesystem=fs).rows_after == 7
    assert len(load("bucket/records", filesystem=fs, deduplicate=False)) == 7
