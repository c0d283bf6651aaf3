"""The curation job on the farm: an embedded Ray, one CPU VerifierWorker, a RecordSink; one sample row
at tiny shapes is verified there, and a re-run resumes it from the sink's records without starting
Ray. Slow (Ray's start dominates: ~30-60 s on 2 loaded cores)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("ray")

from curation_helpers import CPU_VERIFY, curate_config  # noqa: E402, I001

from jobs.sections import build  # noqa: E402
from jobs.curate import CurateJobConfig, FarmBackend  # noqa: E402
from kgym.curation import curate  # noqa: E402
from kgym.tasks.families.kernelbook.dataset import SAMPLE  # noqa: E402


@pytest.mark.slow
def test_curate_on_the_farm_and_resume(tmp_path, tiny_dir):
    source = tmp_path / "one.jsonl"
    source.write_text(SAMPLE.read_text().splitlines()[0] + "\n")
    config = curate_config(tmp_path, source, tiny_dir, kernelbench=None)
    verify = {k: v for k, v in CPU_VERIFY.items() if k != "device"}  # a worker picks its device
    job = build(CurateJobConfig, {"records": {"out": str(tmp_path / "records"), "run_id": "farm"},
                                  "farm": {"workers": 1, "spares": 1}, "verify": verify,
                                  "ray": {"address": "local", "num_cpus": 2}, "curate": {"input": str(source)}})
    backend = FarmBackend(job, log=lambda s: None)
    try:
        result = curate(config, backend)
    finally:
        backend.close()
    assert result.report.verified == 1 and len(result.rows) == 1, result.fates
    assert result.rows[0].answer_mode == "triton"
    again = FarmBackend(job, log=lambda s: None)
    resumed = curate(config, again)
    assert again.job is None  # nothing to verify: Ray never started
    assert resumed.report.resumed == 1 and resumed.report.verified == 0
    assert json.loads(result.report_json.read_text())["counts"]["rows"] == 1
