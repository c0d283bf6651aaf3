"""SFT data curation: KernelBook-layout answers -> verified, decontaminated, labelled chat rows.

    from kgym.curation import CurateConfig, LocalBackend, curate
    config = CurateConfig(input="kb.jsonl", kernelbench="../KernelBench")
    result = curate(config, LocalBackend(verify={}, records="out/records", run_id="curate"))
    result.report.counts, result.dataset            # the funnel, and dataset.parquet beside funnel.json/png

One stage per file (rows, normalise, cap, decontam, classify, verification, labels, replay, length,
messages, dataset, report, plot), wired in `pipeline.py`; `funnel_names.py` holds the stage and drop names,
`curate_config.py` the funnel's typed config. The farm backend and the job's TOML config live with the job
(`jobs/curate.py`, loaded by `kgym.settings`): this package never imports Ray.
"""

from kgym.curation.curate_config import CurateConfig
from kgym.curation.funnel_names import Drop, Label, Stage
from kgym.curation.pipeline import CurationResult, Fate, curate
from kgym.curation.report import FunnelReport, table
from kgym.curation.verification import Backend, LocalBackend, recorded_verdicts, verify_all

__all__ = ["Backend", "CurateConfig", "CurationResult", "Drop", "Fate", "FunnelReport", "Label",
           "LocalBackend", "Stage", "curate", "recorded_verdicts", "table", "verify_all"]
