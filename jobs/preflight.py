"""Checks a job makes before Ray starts or anything is downloaded: the paths it reads exist, the paths it
writes can be written, the model it loads is on this machine.

    check_records(config)          # any config with a [records] section: records.out is writable
    sft(config); rl(config)        # the job's own inputs (dataset, model, sft_adapter, checkpoint.dir)

Each failure is a `ConfigError` naming the setting, what is wrong and the fix, so the job exits 2 with
one line (`jobs.job_cli.job_main`) instead of a Ray ActorDiedError or a download's retries a minute later.
Only local paths are checked: a URI (s3://...) is left to its filesystem, and a path that does not
exist yet is writable when its nearest existing parent is a writable directory. Runs nothing and
imports neither torch nor Ray.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

from jobs.sections import ConfigError


def _is_uri(path: str) -> bool:
    return "://" in path


def check_writable(path: str, setting: str) -> None:
    """`path` (absolute, or relative to the current directory) can be created or written."""
    if _is_uri(path):
        return
    p = Path(path).expanduser().absolute()
    fix = f"give a directory you can write (--set {setting}=DIR)"
    if p.exists() and not p.is_dir():
        raise ConfigError(f"{setting} {path!r} is a file, not a directory: {fix}")
    parent = p
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"{setting} {path!r} cannot be created: {parent} is a file, not a directory; {fix}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{setting} {path!r} cannot be written: no write permission on {parent}; {fix}")


def check_records(config: Any) -> None:
    """A config's `records.out` (the absolute location `jobs.context.records_root` gives) is writable."""
    records = getattr(config, "records", None)
    if records is None or not hasattr(records, "out"):
        return
    from jobs.context import records_root

    check_writable(records_root(records.out), "records.out")


def _check_dir(path: str, setting: str, holds: str, hint: str) -> None:
    p = Path(path).expanduser()
    if not p.exists():
        raise ConfigError(f"{setting} {path!r} does not exist: {hint}")
    if not p.is_dir():
        raise ConfigError(f"{setting} {path!r} is not a directory: {hint}")
    if holds and not (p / holds).is_file():
        raise ConfigError(f"{setting} {path!r} has no {holds}: {hint}")


MODEL_HINT = ("give a local Hugging Face model directory (--set model=DIR); "
              "`python -m jobs.tiny_model DIR` builds a tiny random one for a CPU try")


def _cached_hub_model(model_id: str) -> bool:
    """`model_id` (org/name) has a config.json in the local Hugging Face cache."""
    try:
        from huggingface_hub import try_to_load_from_cache
        from huggingface_hub.utils import HFValidationError
    except ImportError:
        return False
    try:
        found = try_to_load_from_cache(model_id, "config.json")
    except (HFValidationError, ValueError):
        return False
    return isinstance(found, str)


def check_model(model: str, setting: str = "model", hub_cache: bool = False) -> None:
    """A local model directory, or (`hub_cache`) a hub id whose files are already in the local cache:
    nothing is downloaded, so a missing or uncached model is refused here, not after a minute of retries."""
    p = Path(model).expanduser()
    if p.exists() or not hub_cache or model.startswith((".", "/", "~")):
        _check_dir(model, setting, "config.json", MODEL_HINT)
        return
    if not _cached_hub_model(model):
        raise ConfigError(f"{setting} {model!r} is neither a local directory nor a model in the local Hugging Face "
                          f"cache (nothing is downloaded): fetch it first (`hf download {model}`) or {MODEL_HINT}")


def sft(config: Any) -> None:
    """jobs.sft: the dataset exists, the base model is local or cached, `out` is writable."""
    if not _is_uri(config.dataset) and not glob.glob(os.path.expanduser(config.dataset)):
        raise ConfigError(f"dataset {config.dataset!r} does not exist: give jobs.curate's dataset.parquet "
                          f"(--set dataset=FILE; `python -m jobs.curate --config jobs/configs/curate_sample.toml` "
                          f"writes one)")
    check_model(config.model, "model", hub_cache=True)
    check_writable(config.out, "out")


def rl(config: Any) -> None:
    """jobs.rl: the base model and the SFT adapter are local directories, checkpoints can be written."""
    check_model(config.model, "model")
    if config.sft_adapter is not None:
        _check_dir(config.sft_adapter, "sft_adapter", "adapter_config.json",
                   "give jobs.sft's OUT/adapter (--set sft_adapter=DIR), or leave it out to start from the base")
    if config.checkpoint.dir is not None:
        check_writable(config.checkpoint.dir, "checkpoint.dir")
