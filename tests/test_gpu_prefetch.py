"""The baselines-off-the-path machinery on a GPU, without Ray: on one H200 (2026-12-01) the farm's
prefetch + deferred-compile path gave failed verdicts to honest reference solutions of layernorm,
matmul, linear_module and conv2d_3x3 at full size (benchmarks/first_sight.py, mode "new"), while the
same solutions passed through a plain Verifier with the zygote on or off. These tests split the
path in the worker's order (docs/farm.md, "Baselines off the candidate's path") so the failing step
shows: a deferred compile alone, an eager baseline prefetched in the prefetcher's own thread, then
both; each verdict's gate and reason are in the assertion message. `pytest -m gpu tests/test_gpu_prefetch.py`."""

from __future__ import annotations

import pytest

from kgym.contract import EvalRequest, WorkerInfo
from kgym.farm.baseline_prefetch import BaselineRequest, Prefetcher
from kgym.tasks import make
from kgym.verify import Verifier, VerifyConfig

pytestmark = pytest.mark.gpu

TASKS = ("layernorm-v1", "matmul-v1", "linear_module-v1", "conv2d_3x3-v1")


def _verify(verifier, task):
    req = EvalRequest.for_task(task, task.solution)
    return verifier.verify(req.reference, req.candidate, seed=req.seed, **dict(req.overrides))


def _why(task_id, v) -> str:
    return f"{task_id}: gate {v.gate}: {v.reason[:1500]} {(v.error or '')[-800:]} notes {v.notes[:4]}"


@pytest.mark.parametrize("prefetch", [False, True], ids=["deferred-compile-only", "prefetched-in-thread"])
def test_reference_solutions_pass_with_baselines_off_the_path(tmp_path, prefetch):
    cfg = VerifyConfig(device="cuda", defer_compile=True)
    with Verifier(cfg, spares=2, cache_dir=str(tmp_path / "cache"), case_secret=b"gpu-prefetch") as verifier:
        prefetcher = Prefetcher(verifier, WorkerInfo(worker_id="w0"), None)
        try:
            tasks = [make(tid, 4242, size="full") for tid in TASKS]
            if prefetch:
                prefetcher.offer([BaselineRequest.for_task(t) for t in tasks])
                assert prefetcher.settle(600), prefetcher.stats
                assert not prefetcher.stats.failed, prefetcher.stats.failed
            failed = []
            for task in tasks:
                with prefetcher.verifying():
                    v = _verify(verifier, task)
                prefetcher.after_verdict(EvalRequest.for_task(task, task.solution), v)
                if not v.passed:
                    failed.append(_why(task.spec.task_id, v))
            assert not failed, "\n".join(failed)
        finally:
            prefetcher.close()
