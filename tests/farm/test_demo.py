"""`kgym demo` end to end on the CPU: exit 0 (every solution passed, every wrong answer and exploit
rejected at its gate), records of every family in Parquet, the closing tables printed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from farm_helpers import REPO

pytest.importorskip("ray")
pytestmark = pytest.mark.slow


def test_kgym_demo(tmp_path):
    from kgym.records import load
    from kgym.tasks import task_ids
    from kgym.tasks.registry import FAMILIES

    done = subprocess.run([sys.executable, "-m", "kgym.cli", "demo", "--out", str(tmp_path), "--run-id", "d"],
                          cwd=REPO, capture_output=True, text=True, timeout=900, start_new_session=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "every answer got the verdict it should" in done.stdout
    assert "Per family" in done.stdout and "Exploits" in done.stdout
    df = load(tmp_path / "d")
    families = {f for f in FAMILIES if task_ids(f)}
    assert set(df["family"]) == families
    assert (df["outcome"] != "error").all()
