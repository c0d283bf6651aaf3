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
    t0 = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
    return SimpleNamespace(worker_id=worker, started_at=(t0 + dt.timedelta(seconds=start_s)).timestamp(),
                           finished_at=(t0 + dt.timedelta(seconds=end_s)).timestamp())


def test_idle_gaps_are_taken_per_worker_between_its_own_records_in_start_order():
    results = [_result("w1", 2.0, 3.0), _result("w0", 0.0, 1.0), _result("w0", 1.005, 2.0),
               _result("w1", 0.0, 1.99), _result("w0", 2.02, 3.0), _result(None, 0.0, 9.0)]
    gaps = sorted(farm_throughput.idle_gaps_ms(results))
    # w0: 1.0 -> 1.005 and 2.0 -> 2.02; w1: 1.99 -> 2.0; the give-up (no worker) is not a worker's gap,
    # and no gap spans two workers (w1 started at 0.0 while w0 was busy).
    assert gaps == pytest.approx([5.0, 10.0, 20.0], abs=1e-3)  # epoch seconds in floats: ~0.1 us steps


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
                        (["--quiet-mode", "nap"], "--quiet-mode nap"), (["--zygote", "yes"], "--zygote yes")):
        with pytest.raises(SystemExit):
            farm_throughput.main(argv)
        assert words in capsys.readouterr().err


def test_workers_keep_eight_spares_on_a_gpu_and_one_on_the_cpu_unless_told():
    from kgym.farm.farm_config import CPU_SPARES, GPU_SPARES, WorkerConfig, default_spares

    assert WorkerConfig().spares is None
    assert default_spares("cuda:0") == GPU_SPARES == 8
    assert default_spares("cpu") == CPU_SPARES == 1


def test_pause_is_the_default_quiet_mode_everywhere_a_farm_is_configured():
    from jobs.verify_config import VerifyJobConfig
    from kgym.farm.farm_config import WorkerConfig
    from kgym.verify.parent.sandbox import Sandbox

    assert Sandbox.DEFAULT_QUIET_MODE == "pause"
    # a farm left at its defaults hands the sandbox no quiet mode: the sandbox's own default rules
    assert VerifyJobConfig(input="x").farm.worker == WorkerConfig()
    assert WorkerConfig().sandbox_options() == {}


def test_time_shares_split_each_workers_window_into_busy_between_before_and_after():
    t0 = dt.datetime(2026, 11, 30, tzinfo=dt.UTC).timestamp()
    # w0: idle 1 s, busy 1-3 and 4-8, idle 3-4 between; w1: busy 0-6, then the tail 6-10; w2 got nothing.
    results = [_result("w0", 1.0, 3.0), _result("w0", 4.0, 8.0), _result("w1", 0.0, 6.0)]
    shares = farm_throughput.time_shares(results, 3, t0, t0 + 10.0)
    assert shares == pytest.approx({"busy": 12 / 30, "between": 1 / 30, "before": (1 + 10) / 30,
                                    "after": (2 + 4) / 30})
    assert sum(shares.values()) == pytest.approx(1.0)


def test_the_realistic_mix_covers_every_family_with_good_wrong_and_crashing_answers():
    import farm_mix

    from jobs.demo_report import Expectation
    from kgym.tasks import operations

    tasks = farm_mix.mix_tasks("realistic", "tiny")
    assert {t.task_id for t in tasks} >= {"relu-v1", "matmul-v1", "conv2d_3x3-v1", "kernelbook-v1"}
    assert len(tasks) == len({op.family for op in operations().values()})
    per_round = len(tasks) + sum(bool(t.wrong) for t in tasks) + farm_mix.CRASHES_PER_ROUND
    requests, expect = farm_mix.mix_requests("realistic", tasks, per_round + 5, "t")
    assert len(requests) == per_round + 5 == len({r.evaluation_id for r in requests}) == len(expect)
    first = [expect[r.evaluation_id] for r in requests[:per_round]]
    assert sum(e.kind == "solution" for e in first) == len(tasks)
    assert sum(e.kind == "wrong" for e in first) == sum(bool(t.wrong) for t in tasks)
    assert first.count(Expectation("exploit", "huge_allocation", "crash")) == farm_mix.CRASHES_PER_ROUND
    # shuffled (not every solution first), and the same each time
    assert [e.kind for e in first] != sorted((e.kind for e in first), key=("solution", "wrong", "exploit").index)
    again, _ = farm_mix.mix_requests("realistic", tasks, per_round + 5, "t")
    assert [r.evaluation_id for r in again] == [r.evaluation_id for r in requests]


def test_the_solutions_mix_is_four_short_tasks_that_should_all_pass():
    import farm_mix

    tasks = farm_mix.mix_tasks("solutions", "tiny")
    requests, expect = farm_mix.mix_requests("solutions", tasks, 6, "t")
    assert [t.task_id for t in tasks] == list(farm_mix.SOLUTION_TASKS)
    assert [r.task["task_id"] for r in requests][:4] == list(farm_mix.SOLUTION_TASKS)
    assert all(e.kind == "solution" for e in expect.values()) and len(expect) == 6
    with pytest.raises(ValueError, match="mix 'mixed'"):
        farm_mix.mix_tasks("mixed", "tiny")


def test_fresh_seeds_give_every_timed_candidate_new_shapes_and_the_verdict_it_should_get():
    import farm_mix

    tasks = farm_mix.mix_tasks("realistic", "tiny")
    same, _ = farm_mix.mix_requests("realistic", tasks, 20, "t")
    fresh, expect = farm_mix.mix_requests("realistic", tasks, 20, "t", fresh_seed=5000)
    assert [r.task["task_id"] for r in fresh] == [r.task["task_id"] for r in same]  # the same plan
    assert {r.seed for r in same} == {0} and len({r.seed for r in fresh}) == 20
    by_task: dict[str, set] = {}
    for r in fresh:
        by_task.setdefault(r.task["task_id"], set()).add(repr(r.task["shapes"]))
    assert any(len(shapes) > 1 for shapes in by_task.values())  # the same task, drawn again: new shapes
    assert set(expect) == {r.evaluation_id for r in fresh}


def test_the_old_and_new_paths_are_cold_spares_against_forked_spares_with_prefetch():
    assert farm_throughput.PATHS == {"old": ("off", False), "new": ("on", True)}
    with pytest.raises(SystemExit):
        farm_throughput.main(["--path", "older"])


def test_vs_old_compares_a_new_path_row_with_the_old_row_of_equal_spares():
    def row(zygote, prefetch, spares, cpm):
        return {"zygote": zygote, "prefetch": prefetch, "quiet_mode": "pause", "spares": spares, "workers": 1,
                "candidates_per_min": cpm}

    rows = [row(False, False, 2, 20.0), row(False, False, 8, 30.0), row(True, True, 2, 50.0), row(True, True, 8, 45.0)]
    old = {farm_throughput._path_key(r): r for r in rows if not r["prefetch"] and not r["zygote"]}
    assert [farm_throughput._vs_old(r, old) for r in rows] == ["-", "-", "2.50x", "1.50x"]
    assert farm_throughput._vs_old(row(True, True, 4, 50.0), old) == "-"  # no old row with 4 spares
