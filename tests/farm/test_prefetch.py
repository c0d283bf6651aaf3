"""Baselines off the candidate's path, through the farm on an embedded Ray (a CPU worker): the pool
is told which tasks come next, the worker measures their baselines while idle, and the candidates'
verifications find them cached (they measure none); a verdict that deferred its torch.compile
baseline (eager reward) gets it measured after the verdict, and the figure joins the records."""

from __future__ import annotations

import tempfile

import pytest

from kgym.contract import EvalRequest
from kgym.farm.baseline_prefetch import BaselineRequest
from kgym.records import load
from kgym.records.baseline_table import load_baselines
from kgym.verify.parent.verifier import DEFERRED_NOTE
from ray_cluster import PoolConfig, RecordsConfig, RecordSink, SinkConfig, VerifierPool, WorkerConfig

from farm_helpers import QUICK, relu_task

pytestmark = pytest.mark.slow


def test_prefetched_baselines_are_used_and_a_deferred_compile_figure_joins_the_records(ray_local, tmp_path):
    ray = ray_local
    cache = tempfile.mkdtemp(prefix="kgym-prefetch-cache-", dir=tmp_path)  # nothing cached by other tests
    sink = RecordSink.remote(SinkConfig(RecordsConfig(out=str(tmp_path / "records"), run_id="r", job_id="t",
                                                      flush_rows=1, flush_seconds=0.5)))
    # Only stable baselines are cached or joined (issue 29): under CI's load three runs are often over
    # the variation gate, so each measurement may be retried until one is stable.
    config = PoolConfig(workers=1, use_gpus=False, worker=WorkerConfig(spares=1, verify=dict(QUICK, max_remeasure=8),
                                                                       cache_dir=cache))
    ahead, deferred = [relu_task(s) for s in (301, 302)], relu_task(303)
    with VerifierPool(config, sink=sink) as pool:
        actor = pool.actor(pool.worker_ids()[0])
        # eager and compile items per task (compile is skipped on the CPU: not used there by default)
        assert pool.prefetch([BaselineRequest.for_task(t) for t in ahead]) == 4
        assert pool.prefetch([EvalRequest.for_task(ahead[0], ahead[0].solution)]) == 0  # already queued
        assert ray.get(actor.settle_baselines.remote(240))
        stats = ray.get(actor.baseline_stats.remote())
        assert stats.measured == 2 and not stats.failed, stats

        first = list(pool.run([EvalRequest.for_task(t, t.solution) for t in ahead]))
        remeasured = []  # seeds whose verdict measured its own eager baseline (below)
        unstable = []  # of those, the ones whose prefetched figure must have been unstable
        for r in first:
            v = r.verdict
            assert v.passed, (v.gate, v.reason)
            if v.timings["eager"].cached:
                assert v.stages_s["baselines_measured"] == 0.0
            else:
                # Either the prefetched entry was found and validated beside the candidate, and on this
                # loaded CPU came out 1.5x slower than the re-measure (verifier 17): re-measured and
                # replaced, with a note; or all its attempts were over the variation gate, so it was
                # never cached (checked against its record below). Nothing else may miss it.
                if not any("was slower than a re-measure" in n for n in v.notes):
                    unstable.append(r.request.seed)
                remeasured.append(r.request.seed)

        (late,) = pool.run([EvalRequest.for_task(deferred, deferred.solution, measure_compile=True,
                                                 defer_compile=True)])
        v = late.verdict
        assert v.passed and v.timings["compile"] is None and DEFERRED_NOTE in v.notes
        assert ray.get(actor.settle_baselines.remote(240))  # torch.compile on the CPU: ~13 s
        stats = ray.get(actor.baseline_stats.remote())
        assert stats.measured == 3 and stats.rows == 4 + len(remeasured) and not stats.emit_errors, stats
        pool.drain()
    ray.get(sink.close.remote())

    run = tmp_path / "records" / "r"
    table = load_baselines(run)
    got = sorted(zip(table["source"], table["kind"], table["verify_seed"]))
    for seed in unstable:  # a miss without a note: the prefetched figure was recorded, not cached
        rows = table[(table["source"] == "prefetch") & (table["verify_seed"] == seed)]
        assert len(rows) == 1 and not rows["stable"].iloc[0], rows
    assert got == sorted([("candidate", "eager", 303), ("deferred", "compile", 303), ("prefetch", "eager", 301),
                          ("prefetch", "eager", 302)] + [("candidate", "eager", seed) for seed in remeasured])
    stored = load(run, baselines=False)
    assert len(stored) == 3 and stored["compile_ms"].isna().all()  # the verdicts as they were given
    df = load(run).set_index("verify_seed")
    row = df.loc[303]
    assert row["compile_from"] == "baselines" and row["eager_from"] == "verdict"
    compile_ms = table[table["kind"] == "compile"]["median_ms"].iloc[0]
    assert row["compile_ms"] == compile_ms
    assert row["speedup_compile"] == pytest.approx(compile_ms / row["candidate_ms"])
    assert df.loc[[301, 302], "compile_from"].isna().all()  # none was measured for those
