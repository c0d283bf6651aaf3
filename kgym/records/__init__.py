"""kgym's records: one Parquet row per evaluation, written crash-safe, read back with pandas.

    from kgym.records import RecordWriter, make_record, load
    with RecordWriter("runs", run_id="r1", job_id="verify") as w:
        w.write(make_record(task=task_dict, candidate_source=src, verdict=verdict))
    df = load("runs/r1")                       # one row per evaluation id

`schema.py` holds the versioned columns, `record.py` builds rows (and rebuilds verdicts from them
for re-scoring), `writer.py` writes parts, `reader.py` reads and deduplicates, `compact.py` merges
parts, `replay.py` summarises and plots, `local_run.py` runs a list of requests through a Verifier
into the writer and the metrics.
"""

from kgym.contract import Episode, WorkerInfo, evaluation_id, source_hash
from kgym.records.compact import CompactionResult, compact
from kgym.records.local_run import Evaluated, verify_items
from kgym.records.reader import load, read_table
from kgym.records.record import custom_task, make_record, outcome_of, record_of, rescore, verdict_from_record
from kgym.records.schema import COLUMN_NAMES, SCHEMA, SCHEMA_VERSION
from kgym.records.writer import RecordWriter

__all__ = ["COLUMN_NAMES", "CompactionResult", "Episode", "Evaluated", "RecordWriter", "SCHEMA", "SCHEMA_VERSION",
           "WorkerInfo", "compact", "custom_task", "evaluation_id", "load", "make_record", "outcome_of",
           "read_table", "record_of", "rescore", "source_hash", "verdict_from_record", "verify_items"]
