"""Farm throughput: candidates per minute against the number of verifier workers, and the pool's
overhead per evaluation.

    python benchmarks/farm_throughput.py --workers 1,2 --size full --candidates 64     # on 2 GPUs
    python benchmarks/farm_throughput.py --workers 1,2 --candidates 12 --json out.json  # on the CPU
    python benchmarks/farm_throughput.py --workers 1 --size full --quiet-mode wait,pause  # A/B on a GPU

For each worker count it starts a `VerifierPool` (one worker per GPU, or per CPU slot without GPUs),
warms it (every task once per worker: spares started, baselines cached on a shared disk cache, as in
a long-running farm), then times K distinct candidates: the reference solutions of a few tasks, each
made unique by a trailing comment, so every one is a full verification with its own evaluation id.
Overhead per evaluation = (wall x workers / K) - mean worker-side `Verifier.verify` seconds: the time
a worker was not verifying, from the driver's view (dispatch, transfer, record building, tail).
`vs 1 worker`: throughput against one worker of the first row (2.00x at 2 workers is perfect
scaling). Uses Ray core only (no dashboard, no ray[default] features).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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


def measure(workers: int, tasks, candidates: int, gpu: bool, spares: int, max_in_flight: int, cache_dir: str,
            compile_baseline: bool = True, quiet_mode: str = "wait") -> dict:
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
    return {
        "workers": workers, "quiet_mode": quiet_mode, "device": "gpu" if gpu else "cpu", "candidates": len(results),
        "passed": sum(r.outcome == "passed" for r in results),
        "farm_errors": sum(r.outcome == "error" for r in results) + sum(r.outcome == "error" for r in warm),
        "wall_s": wall, "candidates_per_min": 60 * len(results) / wall,
        "verify_s_mean": statistics.fmean(verify), "verify_s_median": statistics.median(verify),
        "overhead_ms_per_eval": 1e3 * (per_eval_worker_s - statistics.fmean(verify)),
        "latency_minus_verify_ms_median": 1e3 * statistics.median(r.latency_s - r.verify_s for r in results
                                                                   if r.verify_s is not None),
        "warmup_s": warm_s, "workers_replaced": stats.replaced, "retried": stats.retried,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", help="comma-separated worker counts (default 1..N: GPUs, or CPU cores)")
    p.add_argument("--size", choices=["tiny", "small", "full"], help="task size (default full on GPU, tiny on CPU)")
    p.add_argument("--candidates", type=int, default=32, help="timed candidates per worker count (default 32)")
    p.add_argument("--spares", type=int, help="warm candidate processes per worker (default 4 on GPU, 1 on CPU)")
    p.add_argument("--max-in-flight", type=int, default=2, help="calls queued per worker (default 2)")
    p.add_argument("--num-cpus", type=int, help="CPUs of the embedded Ray (default: all)")
    p.add_argument("--no-compile", action="store_true",
                   help="skip the torch.compile baseline on GPU (its first max-autotune per task takes 20-60 s)")
    p.add_argument("--quiet-mode", default="wait",
                   help="comma list of what a worker does with spares still warming when it times a short kernel: "
                        "'wait' for them (default) or 'pause' them (SIGSTOP); each is measured, side by side")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH ('-' for stdout)")
    args = p.parse_args(argv)
    from kgym.verify.sandbox import Sandbox

    modes = args.quiet_mode.split(",")
    bad = [m for m in modes if m not in Sandbox.QUIET_MODES]
    if bad:
        p.error(f"--quiet-mode {','.join(bad)}: use wait, pause or both (wait,pause)")

    import ray

    from kgym.tasks import make
    from ray_cluster import RaySettings, connect

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
        spares = args.spares if args.spares is not None else (4 if gpu else 1)
        cache_dir = os.environ.get("KGYM_CACHE_DIR") or tempfile.mkdtemp(prefix="kgym-bench-baselines-")
        device = (ray.get(ray.remote(num_gpus=1)(_gpu_name).remote()) if gpu else "CPU (Triton interpreter)")
        rows = []
        for mode in modes:
            for w in counts:
                print(f"{w} worker(s), quiet mode {mode}: warming up and verifying {args.candidates} candidates ...",
                      file=sys.stderr, flush=True)
                rows.append(measure(w, tasks, args.candidates, gpu, spares, args.max_in_flight, cache_dir,
                                    compile_baseline=not args.no_compile, quiet_mode=mode))
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        base = rows[0]["candidates_per_min"] / rows[0]["workers"]
        print(f"\nfarm throughput on {device}, size {size}, tasks {', '.join(TASKS)}, {args.candidates} candidates, "
              f"{spares} spare(s), max {args.max_in_flight} in flight per worker")
        print(f"{'quiet':>5} {'workers':>7} {'cand/min':>9} {'vs 1 worker':>11} {'passed':>7} {'verify s (mean)':>15} "
              f"{'overhead ms/eval':>16} {'wall s':>7} {'replaced':>8}")
        for r in rows:
            print(f"{r['quiet_mode']:>5} {r['workers']:>7} {r['candidates_per_min']:>9.1f} {r['candidates_per_min'] / base:>10.2f}x "
                  f"{r['passed']:>3}/{r['candidates']:<3} {r['verify_s_mean']:>15.2f} {r['overhead_ms_per_eval']:>16.1f} "
                  f"{r['wall_s']:>7.1f} {r['workers_replaced']:>8}")
        if args.json:
            out = json.dumps({"device": device, "size": size, "tasks": list(TASKS), "spares": spares,
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
