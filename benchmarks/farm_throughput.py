"""Farm throughput: candidates per minute against the number of verifier workers, and the pool's
overhead per evaluation.

    python benchmarks/farm_throughput.py --workers 1,2 --size full --candidates 64     # on 2 GPUs
    python benchmarks/farm_throughput.py --workers 1,2 --candidates 12 --json out.json  # on the CPU
    python benchmarks/farm_throughput.py --workers 1 --size full --quiet-mode pause,wait  # A/B on a GPU
    python benchmarks/farm_throughput.py --workers 1 --size full --spares 4,8            # spares, side by side

For each worker count it starts a `VerifierPool` (one worker per GPU, or per CPU slot without GPUs),
warms it (every task once per worker: spares started, baselines cached on a shared disk cache, as in
a long-running farm), then times K distinct candidates: the reference solutions of a few tasks, each
made unique by a trailing comment, so every one is a full verification with its own evaluation id.
Overhead per evaluation = (wall x workers / K) - mean worker-side `Verifier.verify` seconds: the time
a worker was not verifying, from the driver's view (dispatch, transfer, record building, and the tail:
workers that ran out of work while the last candidates finished elsewhere). `idle gap`: the pool's own
part, from the workers' clocks: the median time between one record's finish and the next one's start
on the same worker (return, dispatch and record building; with `--max-in-flight` >= 2 the next call
is already queued at the worker, so the tail does not count).
`vs 1 worker`: throughput against one worker of the first row (2.00x at 2 workers is perfect
scaling). Uses Ray core only (no dashboard, no ray[default] features).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kgym.verify.sandbox import Sandbox  # noqa: E402

TASKS = ("relu-v1", "softmax-v1", "row_sum-v1", "rmsnorm-v1")
CPU_VERIFY = {"timed_runs": 5, "warmup_runs": 1, "max_remeasure": 1}


def _requests(tasks, n: int, tag: str, gpu: bool):
    from ray_cluster import EvalRequest

    return [EvalRequest.for_task(tasks[i % len(tasks)], tasks[i % len(tasks)].solution + f"\n# {tag} {i}\n",
                                 label=tag, **({} if gpu else CPU_VERIFY)) for i in range(n)]


def _collect(results, what: str, t0: float) -> list:
    """The pool's results as they arrive, with a progress line to stderr for each."""
    out = []
    for r in results:
        out.append(r)
        print(f"  {what}: {len(out)} done ({r.outcome}, verify {r.verify_s or 0:.1f} s) at {time.perf_counter() - t0:.1f} s",
              file=sys.stderr, flush=True)
    return out


def idle_gaps_ms(results) -> list[float]:
    """Per worker, milliseconds between one record's finish and the next record's start (worker clocks)."""
    by_worker: dict[str, list] = {}
    for r in results:
        if r.worker_id is not None and r.record.get("started_at") and r.record.get("finished_at"):
            by_worker.setdefault(r.worker_id, []).append((r.record["started_at"], r.record["finished_at"]))
    gaps = []
    for spans in by_worker.values():
        spans.sort()
        gaps += [1e3 * (start - prev_end).total_seconds() for (_, prev_end), (start, _) in zip(spans, spans[1:])]
    return gaps


def measure(workers: int, tasks, candidates: int, gpu: bool, spares: int, max_in_flight: int, cache_dir: str,
            compile_baseline: bool = True, quiet_mode: str = "pause") -> dict:
    from ray_cluster import PoolConfig, VerifierPool, WorkerConfig

    t_start = time.perf_counter()
    verify = ({} if compile_baseline else {"measure_compile": False}) if gpu else dict(CPU_VERIFY)
    config = PoolConfig(workers=workers, use_gpus=gpu, max_in_flight=max_in_flight,
                        worker=WorkerConfig(spares=spares, cache_dir=cache_dir, verify=verify,
                                            quiet_mode=quiet_mode))
    with VerifierPool(config) as pool:
        warm = _collect(pool.run(_requests(tasks, len(tasks) * workers, f"warm-{workers}", gpu)), "warm-up", t_start)
        warm_s = time.perf_counter() - t_start
        t0 = time.perf_counter()
        results = _collect(pool.run(_requests(tasks, candidates, f"timed-{workers}", gpu)), "timed", t0)
        wall = time.perf_counter() - t0
        stats = pool.stats
    verify = [r.verify_s for r in results if r.verify_s is not None]
    per_eval_worker_s = wall * workers / len(results)
    gaps = idle_gaps_ms(results)
    latency = sorted(r.latency_s for r in results)
    return {
        "workers": workers, "quiet_mode": quiet_mode, "spares": spares, "device": "gpu" if gpu else "cpu",
        "candidates": len(results),
        "passed": sum(r.outcome == "passed" for r in results),
        "farm_errors": sum(r.outcome == "error" for r in results) + sum(r.outcome == "error" for r in warm),
        "wall_s": wall, "candidates_per_min": 60 * len(results) / wall,
        "verify_s_mean": statistics.fmean(verify), "verify_s_median": statistics.median(verify),
        "verify_s_p90": _pct(sorted(verify), 0.9),
        "overhead_ms_per_eval": 1e3 * (per_eval_worker_s - statistics.fmean(verify)),
        "idle_gap_ms_median": statistics.median(gaps) if gaps else None,
        "idle_gap_ms_p90": _pct(sorted(gaps), 0.9) if gaps else None,
        "latency_s_p50": _pct(latency, 0.5), "latency_s_p90": _pct(latency, 0.9), "latency_s_p99": _pct(latency, 0.99),
        "latency_minus_verify_ms_median": 1e3 * statistics.median(r.latency_s - r.verify_s for r in results
                                                                   if r.verify_s is not None),
        "warmup_s": warm_s, "workers_replaced": stats.replaced, "retried": stats.retried,
    }


def _pct(sorted_values: list[float], q: float) -> float:
    """The q-quantile by nearest rank."""
    rank = math.ceil(q * len(sorted_values) - 1e-9)  # 0.9 * 100 is 90.00000000000001 in floats
    return sorted_values[min(len(sorted_values) - 1, max(0, rank - 1))]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", help="comma-separated worker counts (default 1..N: GPUs, or CPU cores)")
    p.add_argument("--size", choices=["tiny", "small", "full"], help="task size (default full on GPU, tiny on CPU)")
    p.add_argument("--candidates", type=int, default=32, help="timed candidates per worker count (default 32)")
    p.add_argument("--spares", help="comma list of warm candidate processes per worker, each measured "
                                    "(default: the farm's, 8 on GPU and 1 on CPU)")
    p.add_argument("--max-in-flight", type=int, default=2, help="calls queued per worker (default 2)")
    p.add_argument("--num-cpus", type=int, help="CPUs of the embedded Ray (default: all)")
    p.add_argument("--no-compile", action="store_true",
                   help="skip the torch.compile baseline on GPU (its first max-autotune per task takes 20-60 s)")
    p.add_argument("--quiet-mode", default=Sandbox.DEFAULT_QUIET_MODE,
                   help="comma list of what a worker does with spares still warming when it times a short kernel: "
                        "'pause' them (SIGSTOP, the default) or 'wait' for them; each is measured, side by side")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH ('-' for stdout)")
    args = p.parse_args(argv)

    modes = args.quiet_mode.split(",")
    bad = [m for m in modes if m not in Sandbox.QUIET_MODES]
    if bad:
        p.error(f"--quiet-mode {','.join(bad)}: use pause, wait or both (pause,wait)")
    try:
        spare_counts = [int(x) for x in args.spares.split(",")] if args.spares else None
    except ValueError:
        p.error(f"--spares {args.spares}: use whole numbers, comma-separated (4 or 4,8)")
    if spare_counts and min(spare_counts) < 0:
        p.error(f"--spares {args.spares}: a worker keeps zero or more spares")

    import ray

    from kgym.tasks import make
    from ray_cluster import RaySettings, connect
    from ray_cluster.worker import default_spares

    started = connect(RaySettings(num_cpus=args.num_cpus))
    try:
        gpus = int(ray.cluster_resources().get("GPU", 0))
        gpu = gpus > 0
        most = gpus if gpu else int(ray.cluster_resources().get("CPU", 1))
        counts = [int(x) for x in args.workers.split(",")] if args.workers else list(range(1, most + 1))
        if max(counts) > most:
            p.error(f"asked for {max(counts)} workers; this machine has {most} {'GPUs' if gpu else 'CPUs'} for Ray")
        size = args.size or ("full" if gpu else "tiny")
        tasks = [make(t, 0, size=size) for t in TASKS]
        spare_counts = spare_counts or [default_spares("cuda" if gpu else "cpu")]
        cache_dir = os.environ.get("KGYM_CACHE_DIR") or tempfile.mkdtemp(prefix="kgym-bench-baselines-")
        device = (ray.get(ray.remote(num_gpus=1)(_gpu_name).remote()) if gpu else "CPU (Triton interpreter)")
        rows = []
        for mode in modes:
            for spares in spare_counts:
                for w in counts:
                    print(f"{w} worker(s), quiet mode {mode}, {spares} spare(s): warming up and verifying "
                          f"{args.candidates} candidates ...", file=sys.stderr, flush=True)
                    rows.append(measure(w, tasks, args.candidates, gpu, spares, args.max_in_flight, cache_dir,
                                        compile_baseline=not args.no_compile, quiet_mode=mode))
                    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        base = rows[0]["candidates_per_min"] / rows[0]["workers"]
        print(f"\nfarm throughput on {device}, size {size}, tasks {', '.join(TASKS)}, {args.candidates} candidates, "
              f"max {args.max_in_flight} in flight per worker")
        print(f"{'quiet':>5} {'spares':>6} {'workers':>7} {'cand/min':>9} {'vs 1 worker':>11} {'passed':>7} "
              f"{'verify s mean/p90':>17} {'latency s p50/p90/p99':>21} {'overhead ms/eval':>16} "
              f"{'idle gap ms':>11} {'wall s':>7} {'replaced':>8}")
        for r in rows:
            gap = "-" if r["idle_gap_ms_median"] is None else f"{r['idle_gap_ms_median']:.1f}"
            lat = f"{r['latency_s_p50']:.1f}/{r['latency_s_p90']:.1f}/{r['latency_s_p99']:.1f}"
            print(f"{r['quiet_mode']:>5} {r['spares']:>6} {r['workers']:>7} {r['candidates_per_min']:>9.1f} "
                  f"{r['candidates_per_min'] / base:>10.2f}x {r['passed']:>3}/{r['candidates']:<3} "
                  f"{r['verify_s_mean']:>8.2f}/{r['verify_s_p90']:<8.2f} {lat:>21} {r['overhead_ms_per_eval']:>16.1f} "
                  f"{gap:>11} {r['wall_s']:>7.1f} {r['workers_replaced']:>8}")
        if args.json:
            out = json.dumps({"device": device, "size": size, "tasks": list(TASKS),
                              "max_in_flight": args.max_in_flight, "results": rows}, indent=2)
            if args.json == "-":
                print(out)
            else:
                Path(args.json).write_text(out + "\n")
        return 0 if all(r["farm_errors"] == 0 and r["passed"] == r["candidates"] for r in rows) else 1
    finally:
        if started:
            ray.shutdown()


def _gpu_name() -> str:
    import torch

    return torch.cuda.get_device_name(0)


if __name__ == "__main__":
    sys.exit(main())
