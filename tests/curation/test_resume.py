"""Resume: a re-run verifies nothing already in the run's records, and an interrupted run verifies
only what it had not recorded. Backends here replay the first run's verdicts (no verifier)."""

from __future__ import annotations

from dataclasses import replace

from curation_helpers import RUN_ID

from kgym.curation import curate, recorded_verdicts
from kgym.records.layout import run_dir
from kgym.records.reader import kept_positions, read_table
from kgym.records.record import make_record
from kgym.records.writer import RecordWriter


class Refuse:
    def __init__(self, records):
        self.records = records

    def recorded(self):
        return recorded_verdicts(self.records, RUN_ID)

    def run(self, requests, on_result):
        raise AssertionError(f"asked to verify {len(requests)} request(s) already recorded")


class Replay:
    """Answers from known verdicts and records them, as a real backend would."""

    def __init__(self, verdicts, records, run_id):
        self.verdicts, self.records, self.run_id, self.asked = verdicts, records, run_id, []

    def recorded(self):
        return recorded_verdicts(self.records, self.run_id)

    def run(self, requests, on_result):
        with RecordWriter(self.records, self.run_id, "curate") as w:
            for r in requests:
                self.asked.append(r.label)
                v = self.verdicts[r.evaluation_id]
                w.write(make_record(task=r.task, candidate_source=r.candidate, verdict=v, seed=r.seed))
                on_result(r, v)


def _ids(result):
    return sorted(r.evaluation_id for r in result.rows)


def test_rerun_verifies_nothing(curated):
    again = curate(curated.config, Refuse(curated.records))
    assert again.report.verified == 0 and again.report.resumed == 5
    assert _ids(again) == _ids(curated.result)
    assert [(f.uuid, f.dropped) for f in again.fates] == [(f.uuid, f.dropped) for f in curated.result.fates]


def test_interrupted_run_verifies_only_the_rest(curated, tmp_path):
    cfg = curated.config
    verdicts = recorded_verdicts(curated.records, RUN_ID)
    # A run killed after two verdicts: its records hold only good-1's and wrong's rows.
    kept = {curated.result.fate_of(u).evaluation_id for u in ("good-1", "wrong")}
    table = read_table(run_dir(curated.records, RUN_ID))
    table = table.take(kept_positions(table.to_pandas()))
    rows = [r for r in table.to_pylist() if r["evaluation_id"] in kept]
    with RecordWriter(tmp_path, "killed", "curate") as w:
        for r in rows:
            w.write({k: v for k, v in r.items() if k not in ("schema_version", "run_id", "job_id", "recorded_at")})
    config = replace(cfg, out=str(tmp_path / "o"))
    backend = Replay(verdicts, tmp_path, "killed")
    resumed = curate(config, backend)
    assert sorted(backend.asked) == ["good-2", "hybrid", "long"]
    assert resumed.report.resumed == 2 and resumed.report.verified == 3
    assert _ids(resumed) == _ids(curated.result)
    rerun = Refuse(tmp_path)
    rerun.recorded = backend.recorded  # the killed run's records, now complete
    assert curate(config, rerun).report.resumed == 5
