"""kgym's records: one Parquet row per evaluation, written crash-safe, read back with pandas.

    from kgym.records import RecordWriter, make_record, load
    with RecordWriter("runs", run_id="r1", job_id="verify") as w:
        w.write(make_record(task=task_dict, candidate_source=src, verdict=verdict))
    df = load("runs/r1")                       # one row per evaluation id

`schema.py` holds the versioned columns, `record.py` builds rows, `writer.py` writes parts,
`reader.py` reads and deduplicates, `compact.py` merges parts, `replay.py` summarises and plots,
`local_run.py` runs a list of items through a Verifier into the writer and the metrics.
"""

from kgym.records.compact import CompactionResult, compact
from kgym.records.ids import evaluation_id, source_hash
from kgym.records.local_run import Evaluated, RunItem, verify_items
from kgym.records.reader import load, read_table
from kgym.records.record import Episode, custom_task, make_record, outcome_of
from kgym.records.schema import COLUMN_NAMES, SCHEMA, SCHEMA_VERSION
from kgym.records.worker import WorkerInfo
from kgym.records.writer import RecordWriter

__all__ = ["COLUMN_NAMES", "CompactionResult", "Episode", "Evaluated", "RecordWriter", "RunItem", "SCHEMA", "SCHEMA_VERSION",
           "WorkerInfo", "compact", "custom_task", "evaluation_id", "load", "make_record", "outcome_of",
           "read_table", "source_hash", "verify_items"]
