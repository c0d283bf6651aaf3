"""Shared pieces of the farm tests (not a test module): small relu requests, hostile candidates,
input files for jobs.verify, and reading back a run's rows."""

from __future__ import annotations

import json
import os
from pathlib import Path

from kgym.records import load
from kgym.tasks import make
from ray_cluster import EvalRequest, PoolConfig, WorkerConfig

REPO = Path(__file__).resolve().parents[2]
# Few runs: the farm's behaviour is under test here, not the timing gate.
QUICK = {"timed_runs": 3, "warmup_runs": 1, "max_remeasure": 0}


def cpu_pool_config(workers: int = 2, **kw) -> PoolConfig:
    return PoolConfig(workers=workers, use_gpus=False, worker=WorkerConfig(spares=1, verify=dict(QUICK),
                                                                           cache_dir=os.environ.get("KGYM_TEST_CACHE")),
                      **kw)


def relu_task(seed: int):
    return make("relu-v1", seed, size="tiny")


def good_and_wrong(seeds) -> list[EvalRequest]:
    out = []
    for s in seeds:
        t = relu_task(s)
        out.append(EvalRequest.for_task(t, t.solution, label="solution"))
        out.append(EvalRequest.for_task(t, t.wrong, label="wrong"))
    return out


def hostile(name: str, seed: int = 0, **overrides) -> EvalRequest:
    source = (REPO / "jobs" / "demo_answers" / f"{name}.py").read_text()
    return EvalRequest.for_task(relu_task(seed), source, label=name, **overrides)


def write_input(path: Path, seeds) -> list[str]:
    """A jobs.verify input file of relu solutions and wrong answers; returns their evaluation ids."""
    rows, ids = [], []
    for s in seeds:
        t = relu_task(s)
        for label, src in (("solution", t.solution), ("wrong", t.wrong)):
            rows.append({"task_id": "relu-v1", "seed": s, "size": "tiny", "candidate": src, "label": label})
            ids.append(EvalRequest.for_task(t, src).evaluation_id)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return ids


def write_config(path: Path, input_path: Path, out: Path | str, run_id: str, workers: int = 2,
                 num_cpus: int | None = 2, address: str | None = "local", flush_rows: int | None = None) -> None:
    lines = [f'input = "{input_path}"', 'size = "tiny"', "", "[records]", f'out = "{out}"', f'run_id = "{run_id}"',
             *([f"flush_rows = {flush_rows}"] if flush_rows else []), "", "[farm]", f"workers = {workers}", "",
             "[verify]", *[f"{k} = {v}" for k, v in QUICK.items()]]
    if address or num_cpus:
        lines += ["", "[ray]"] + ([f'address = "{address}"'] if address else []) + \
                 ([f"num_cpus = {num_cpus}"] if num_cpus else [])
    path.write_text("\n".join(lines) + "\n")


def rows(run_path: Path):
    """Every visible row of a run, duplicates included."""
    return load(run_path, deduplicate=False)


def kill_once_durable(proc, run_path: Path, timeout_s: float = 300.0) -> None:
    """SIGKILL a job's driver as soon as its first rows are durable (a visible Parquet part), so the
    kill lands mid-batch however fast verification has become (a fixed sleep let two workers finish
    the whole batch first once spares were forked from a zygote). Give the job `flush_rows = 1`:
    with the default 8 a part appears only after eight rows, and on the clean-clone run three workers
    finished all 40 rows of test_elastic's batch between that part and the workers' death.
    The poll only lists part files (`find_parts`), never parses them: reading the rows back (pandas,
    the baselines join) took long enough on a loaded CI machine that a run of 40 rows finished
    between two polls (stop 36)."""
    import signal
    import time

    from kgym.records.layout import find_parts

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if find_parts(run_path):
                break
        except FileNotFoundError:  # the run directory is not there yet
            pass
        time.sleep(0.02)
    else:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            raise AssertionError(f"no row of the job was durable after {timeout_s:.0f} s")
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
