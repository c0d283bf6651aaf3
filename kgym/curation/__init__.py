"""SFT data curation: KernelBook-layout answers -> verified, decontaminated, labelled chat rows.

    from kgym.curation import CurateConfig, LocalBackend, curate
    result = curate(CurateConfig(input="kb.jsonl", kernelbench="../KernelBench"), LocalBackend({}, "out/records", "curate"))
    result.report.counts, result.dataset            # the funnel, and dataset.parquet beside funnel.json/png

One stage per file (rows, normalise, cap, decontam, classify, verification, labels, replay, length,
messages, dataset, report, plot), wired in `pipeline.py`; `names.py` holds the stage and drop names,
`config.py` the job's typed config, `toml_config.py` its TOML loader. The farm backend lives with the
job (`jobs/curate.py`): this package never imports Ray.
"""

from kgym.curation.config import CurateConfig, FarmSettings
from kgym.curation.names import Drop, Label, Stage
from kgym.curation.pipeline import CurationResult, Fate, curate
from kgym.curation.report import FunnelReport, table
from kgym.curation.verification import Backend, LocalBackend, recorded_verdicts, verify_all

__all__ = ["Backend", "CurateConfig", "CurationResult", "Drop", "FarmSettings", "Fate", "FunnelReport", "Label",
           "LocalBackend", "Stage", "curate", "recorded_verdicts", "table", "verify_all"]
