"""First sight of a task: how long fresh tasks' first verdicts take with the baselines on the
candidate's path (the old path) and off it (prefetch, deferred torch.compile), side by side in one run.

    python benchmarks/first_sight.py                                   # every mode, default tasks
    python benchmarks/first_sight.py --gap 30 --json first_sight.json  # 30 s of "generation" first
    python benchmarks/first_sight.py --demo                            # + kgym demo on an empty cache, old vs new
    python benchmarks/first_sight.py --modes old,new --verify-cli REF.py CAND.py   # + the cold kgym verify CLI

Each mode starts a one-worker farm on an empty baseline cache of its own (first sight), waits until
the worker is up, tells it the tasks (modes with prefetch), waits `--gap` seconds (the rollout's
generation time, when the farm is idle in RL), then submits each task's reference solution at once
and times the verdicts from that moment. Modes:
  old       every verdict waits for its baselines (eager, then torch.compile), measured on its path
  prefetch  the same, but the farm was told the tasks `--gap` seconds ahead
  defer     no prefetch; verdicts do not wait for torch.compile (eager reward), measured afterwards
  new       prefetch and defer: what `kgym demo` and an eager-reward RL run do now
Columns: first/all = seconds from submission to the first/last verdict; on path = seconds of full
baseline measurements inside verifications (`stages_s["baselines_measured"]`); off path = the
worker's prefetched and deferred measurements (count, seconds); compile in verdict = verdicts that
carry a compile figure; compile done = seconds from submission until every compile figure was
measured (in the verdict or after it). Each mode runs on a Ray instance of its own with an empty
torch.compile (inductor) cache, so no mode compiles faster for a graph an earlier mode compiled.
`--demo` runs `python -m jobs.demo` twice (compile_baselines=wait, then the default) and
`--verify-cli` runs `kgym verify` twice (--baseline joint, which measures torch.compile as the old
default did on a GPU, then the default eager), each on empty caches, and reports their wall times.
Ray core only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jobs.demo import CPU_VERIFY  # noqa: E402 - the interpreter is slow: few timed runs, as in kgym demo

MODES = {"old": (False, False), "prefetch": (True, False), "defer": (False, True), "new": (True, True)}
RUN_ORDER = ("new", "prefetch", "defer", "old")  # new first: a warmed inductor cache favours old only
GPU_TASKS = "relu-v1,softmax-v1,layernorm-v1,matmul-v1,linear_module-v1,conv2d_3x3-v1"
CPU_TASKS = "relu-v1,softmax-v1,layernorm-v1"


def run_mode(mode: str, tasks, gpu: bool, gap: float, spares: int, compile_on_cpu: bool) -> dict:
    import ray

    from kgym.contract import EvalRequest
    from kgym.farm.baseline_prefetch import BaselineRequest
    from ray_cluster import PoolConfig, VerifierPool, WorkerConfig

    prefetch, defer = MODES[mode]
    verify = {} if gpu else dict(CPU_VERIFY, measure_compile=compile_on_cpu)
    overrides = {"defer_compile": True} if defer else {}
    cache = tempfile.mkdtemp(prefix=f"kgym-first-sight-{mode}-")
    config = PoolConfig(workers=1, use_gpus=gpu, worker=WorkerConfig(spares=spares, verify=verify, cache_dir=cache))
    with VerifierPool(config) as pool:
        pool.health(timeout_s=600)  # the worker is up, its spares started: every mode starts alike
        actor = pool.actor(pool.worker_ids()[0])
        if prefetch:
            pool.prefetch([BaselineRequest.for_task(t, **overrides) for t in tasks])
        time.sleep(gap)
        t0 = time.perf_counter()
        arrivals, results = [], []
        for r in pool.run([EvalRequest.for_task(t, t.solution, label=t.task_id, **overrides) for t in tasks]):
            arrivals.append(time.perf_counter() - t0)
            results.append(r)
            why = "" if r.verdict.passed else f" [{r.verdict.gate}: {r.verdict.reason[:300]}]"
            print(f"  {mode}: {r.request.label} {r.outcome} at {arrivals[-1]:.1f} s{why}", file=sys.stderr, flush=True)
        settled = ray.get(actor.settle_baselines.remote(1800))
        compile_done = time.perf_counter() - t0
        stats = ray.get(actor.baseline_stats.remote())
    verdicts = [r.verdict for r in results]
    return {
        "mode": mode, "tasks": len(tasks), "passed": sum(v.passed for v in verdicts),
        "failed": {r.request.label: f"{r.verdict.gate}: {r.verdict.reason[:300]}" for r in results
                   if not r.verdict.passed},
        "first_s": min(arrivals), "all_s": max(arrivals),
        "on_path_s": sum(v.stages_s.get("baselines_measured", 0.0) for v in verdicts),
        "off_path": stats.measured, "off_path_s": stats.seconds,
        "compile_in_verdict": sum(v.timings.get("compile") is not None for v in verdicts),
        "compile_done_s": compile_done if settled else None,
        "verify_s_mean": sum(r.verify_s or 0.0 for r in results) / len(results),
    }


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    env = {**env, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(prefix="kgym-first-sight-inductor-")}
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    return time.perf_counter() - t0, p.returncode, p.stdout + p.stderr


def run_demo(size: str | None) -> list[dict]:
    rows = []
    for label, sets in (("old (compile_baselines=wait)", ["--set", "compile_baselines=\"wait\""]),
                        ("new (default: defer + prefetch)", [])):
        env = {**os.environ, "KGYM_CACHE_DIR": tempfile.mkdtemp(prefix="kgym-first-sight-demo-")}
        out = tempfile.mkdtemp(prefix="kgym-first-sight-demo-out-")
        cmd = [sys.executable, "-m", "jobs.demo", "--out", out, *sets] + (["--size", size] if size else [])
        wall, rc, text = _timed(cmd, env)
        m = re.search(r"the last verdict at ([0-9.]+) s", text)
        rows.append({"what": f"kgym demo {label}", "wall_s": wall, "last_verdict_s": float(m.group(1)) if m else None,
                     "rc": rc})
        print(f"  demo {label}: {wall:.1f} s (exit {rc})", file=sys.stderr, flush=True)
    return rows


def run_verify_cli(reference: str, candidate: str) -> list[dict]:
    rows = []
    for label, baseline in (("old (--baseline joint: waits for torch.compile)", "joint"), ("new (eager)", "eager")):
        env = {**os.environ, "KGYM_CACHE_DIR": tempfile.mkdtemp(prefix="kgym-first-sight-cli-")}
        cmd = [sys.executable, "-m", "kgym.cli", "verify", "--reference", reference, "--candidate", candidate,
               "--baseline", baseline]
        wall, rc, text = _timed(cmd, env)
        rows.append({"what": f"kgym verify {label}", "wall_s": wall, "rc": rc})
        print(f"  verify {label}: {wall:.1f} s (exit {rc})", file=sys.stderr, flush=True)
    return rows


def _fmt(x: float | None, unit: str = "s") -> str:
    return "-" if x is None else f"{x:.1f}{unit}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--modes", default=",".join(RUN_ORDER), help=f"comma list of {', '.join(MODES)}")
    p.add_argument("--tasks", help=f"comma list of task ids (default GPU: {GPU_TASKS}; CPU: {CPU_TASKS})")
    p.add_argument("--seed", type=int, default=None, help="task seed (default: a fresh one, so shapes are new)")
    p.add_argument("--size", choices=["tiny", "small", "full"], help="task size (default: full on GPU, tiny on CPU)")
    p.add_argument("--gap", type=float, default=20.0, help="seconds between telling the farm and submitting")
    p.add_argument("--spares", type=int, default=None, help="spares of the worker (default: the worker's)")
    p.add_argument("--no-compile-on-cpu", action="store_true",
                   help="on the CPU, skip torch.compile baselines (the default measures them, ~13 s each here)")
    p.add_argument("--demo", action="store_true", help="also kgym demo on an empty cache, old vs new")
    p.add_argument("--verify-cli", nargs=2, metavar=("REF", "CAND"), help="also the cold kgym verify, old vs new")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    bad = [m for m in modes if m not in MODES]
    if bad:
        p.error(f"--modes: unknown {bad}; use {', '.join(MODES)}")

    import ray

    from kgym.farm.farm_config import default_spares
    from kgym.tasks import make
    from ray_cluster import RaySettings, connect

    def start_ray(mode: str) -> None:
        # inductor reads its cache dir from the environment of the workers Ray starts now
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"kgym-first-sight-inductor-{mode}-")
        connect(RaySettings(address="local"))

    start_ray("probe")
    gpu = int(ray.cluster_resources().get("GPU", 0)) > 0
    size = args.size or ("full" if gpu else "tiny")
    seed = args.seed if args.seed is not None else int(time.time()) % 100_000
    ids = (args.tasks or (GPU_TASKS if gpu else CPU_TASKS)).split(",")
    tasks = [make(t, seed + i, size=size) for i, t in enumerate(ids)]
    spares = args.spares if args.spares is not None else default_spares("cuda" if gpu else "cpu")
    print(f"first sight: {len(tasks)} tasks ({', '.join(ids)}), size {size}, seed {seed}, gap {args.gap:g} s, "
          f"{'GPU' if gpu else 'CPU'}, {spares} spares", file=sys.stderr, flush=True)
    rows = []
    for m in sorted(modes, key=RUN_ORDER.index):
        if not ray.is_initialized():
            start_ray(m)
        rows.append(run_mode(m, tasks, gpu, args.gap, spares, not args.no_compile_on_cpu))
        ray.shutdown()
    extra = (run_demo(args.size) if args.demo else []) + (run_verify_cli(*args.verify_cli) if args.verify_cli else [])

    print(f"\nfirst verdicts of {len(tasks)} fresh tasks, one worker, {'GPU' if gpu else 'CPU'} ({size}):")
    print("| mode | first | all | on path | off path | compile in verdict | compile done | verify mean | passed |")
    print("|---|---|---|---|---|---|---|---|---|")
    old = next((r for r in rows if r["mode"] == "old"), None)
    for r in rows:
        ratio = f" ({old['all_s'] / r['all_s']:.2f}x)" if old and r is not old and r["all_s"] else ""
        print(f"| {r['mode']} | {_fmt(r['first_s'])} | {_fmt(r['all_s'])}{ratio} | {_fmt(r['on_path_s'])} | "
              f"{r['off_path']} ({_fmt(r['off_path_s'])}) | {r['compile_in_verdict']}/{r['tasks']} | "
              f"{_fmt(r['compile_done_s'])} | {_fmt(r['verify_s_mean'])} | {r['passed']}/{r['tasks']} |")
    for e in extra:
        lv = f", last verdict {e['last_verdict_s']:.1f} s" if e.get("last_verdict_s") is not None else ""
        print(f"{e['what']}: {e['wall_s']:.1f} s{lv} (exit {e['rc']})")
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"modes": rows, "commands": extra, "gpu": gpu, "size": size, "seed": seed, "gap_s": args.gap,
                       "tasks": ids}, f, indent=2)
        os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
