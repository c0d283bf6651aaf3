"""Which run a notebook replays: `run_dir()` reads `KGYM_RUN_DIR` and resolves a relative path.

    RUN_DIR = run_dir("out/demo")      # KGYM_RUN_DIR, else the default; relative: see below

README says `KGYM_RUN_DIR=out/demo jupyter lab notebooks/replay.ipynb`, but JupyterLab starts the
kernel in `notebooks/`, so a path relative to where the user typed the command does not exist from
there (issue 31). A relative path is looked up, in order, against the kernel's current directory,
the directory the command was typed in (`$PWD`, which the kernel inherits and `os.chdir` does not
change) and the repository root (the parent of the `kgym` package of a checkout); the first that
exists wins, and none existing leaves it relative to the current directory (so the error names the
path as given). URIs (s3://...) and absolute paths are kept. Reads nothing else.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENV = "KGYM_RUN_DIR"
REPO_ROOT = Path(__file__).resolve().parents[2]


def run_dir(default: str, env: Mapping[str, str] | None = None, cwd: str | Path | None = None) -> str:
    """`$KGYM_RUN_DIR` (or `default`) as a path that exists from here when it exists anywhere above."""
    env = os.environ if env is None else env
    value = env.get(ENV) or default
    if "://" in value or Path(value).expanduser().is_absolute():
        return value
    here = Path(cwd or os.getcwd())
    bases = [here, *([Path(env["PWD"])] if env.get("PWD") else []), REPO_ROOT]
    for base in bases:
        if (base / value).exists():
            return str(base / value)
    return value
