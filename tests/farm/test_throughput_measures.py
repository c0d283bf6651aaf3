"""The farm benchmark's own arithmetic (idle gaps between verifications, percentiles) and the number of
spares a worker keeps when its config names none."""

from __future__ import annotations

import datetime as dt
import sys
from types import SimpleNamespace

import pytest

from farm_helpers import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import farm_throughput  # noqa: E402


def _result(worker: str | None, start_s: float, end_s: float):
    t0 = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)
    return SimpleNamespace(worker_id=worker, record={"started_at": t0 + dt.timedelta(seconds=start_s),
                                                     "finished_at": t0 + dt.timedelta(seconds=end_s)})


def test_idle_gaps_are_taken_per_worker_between_its_own_records_in_start_order():
    results = [_result("w1", 2.0, 3.0), _result("w0", 0.0, 1.0), _result("w0", 1.005, 2.0),
               _result("w1", 0.0, 1.99), _result("w0", 2.02, 3.0), _result(None, 0.0, 9.0)]
    gaps = sorted(farm_throughput.idle_gaps_ms(results))
    # w0: 1.0 -> 1.005 and 2.0 -> 2.02; w1: 1.99 -> 2.0; the give-up (no worker) is not a worker's gap,
    # and no gap spans two workers (w1 started at 0.0 while w0 was busy).
    assert gaps == pytest.approx([5.0, 10.0, 20.0])


def test_a_worker_with_one_record_has_no_gap():
    assert farm_throughput.idle_gaps_ms([_result("w0", 0.0, 1.0), _result("w1", 0.5, 2.0)]) == []


def test_nearest_rank_percentiles():
    values = [float(i) for i in range(1, 101)]
    assert farm_throughput._pct(values, 0.5) == 50.0
    assert farm_throughput._pct(values, 0.9) == 90.0
    assert farm_throughput._pct(values, 0.99) == 99.0
    assert farm_throughput._pct([7.0], 0.99) == 7.0
    assert farm_throughput._pct([1.0, 2.0], 0.0) == 1.0


def test_bad_spares_and_quiet_mode_are_refused_before_ray_starts(capsys):
    for argv, words in ((["--spares", "four"], "--spares four"), (["--spares", "-1"], "zero or more"),
                        (["--quiet-mode", "nap"], "--quiet-mode nap")):
        with pytest.raises(SystemExit):
            farm_throughput.main(argv)
        assert words in capsys.readouterr().err


def test_workers_keep_eight_spares_on_a_gpu_and_one_on_the_cpu_unless_told():
    from ray_cluster.worker import CPU_SPARES, GPU_SPARES, WorkerConfig, default_spares

    assert WorkerConfig().spares is None
    assert default_spares("cuda:0") == GPU_SPARES == 8
    assert default_spares("cpu") == CPU_SPARES == 1


def test_pause_is_the_default_quiet_mode_everywhere_a_farm_is_configured():
    from jobs.verify_config import VerifyJobConfig
    from kgym.verify.sandbox import Sandbox
    from ray_cluster.worker import WorkerConfig

    assert Sandbox.DEFAULT_QUIET_MODE == "pause"
    assert WorkerConfig().quiet_mode == VerifyJobConfig(input="x").quiet_mode == "pause"
