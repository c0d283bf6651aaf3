"""Farm throughput: candidates per minute against the number of verifier workers, where the workers'
time goes, and the pool's overhead per evaluation.

    python benchmarks/farm_throughput.py --workers 1,2 --size full --candidates 96 --no-compile  # on 2 GPUs
    python benchmarks/farm_throughput.py --workers 1,2,4,8 --mix realistic --records out/bench --plot farm.png
    python benchmarks/farm_throughput.py --workers 1,2 --candidates 12 --json out.json  # on the CPU
    python benchmarks/farm_throughput.py --workers 1 --size full --quiet-mode pause,wait  # A/B on a GPU
    python benchmarks/farm_throughput.py --workers 1 --size full --spares 4,8            # spares, side by side
    python benchmarks/farm_throughput.py --workers 1 --size full --zygote on,off        # forked vs cold spares
    python benchmarks/farm_throughput.py --workers 1 --mix realistic --fresh-seeds --path old,new --spares 2,4,8

For each worker count it starts a `VerifierPool` (one worker per GPU, or per CPU slot without GPUs),
warms it (every task's solution once per worker: spares started, baselines cached on a shared disk
cache, as in a long-running farm), then times K distinct candidates of the mix (`farm_mix.py`): the
solutions of four short tasks, or a realistic mix of every family with good, wrong and crashing
answers; each is unique, so every one is a verification with its own evaluation id. `expected`:
answers that got the verdict they should (solutions pass, wrong answers and crashes are rejected).
Overhead per evaluation = (wall x workers / K) - mean worker-side `Verifier.verify` seconds: the time
a worker was not verifying, from the driver's view (dispatch, transfer, record building, and the tail:
workers that ran out of work while the last candidates finished elsewhere). `idle gap`: the pool's own
part, from the workers' clocks: the median time between one record's finish and the next one's start
on the same worker (return, dispatch and record building; with `--max-in-flight` >= 2 the next call
is already queued at the worker, so the tail does not count). `busy/between/before/after`: shares of
the workers' time in the timed window: verifying, between two verifications, before the first and
after the last (the tail). With `--records` the farm service also streams every row to a `RecordSink`
(warm-up rows included), as the jobs do. `--fresh-seeds` draws every timed candidate's task again
with a new seed (new shapes: its baselines are measured on first sight, as in an RL run), and
`--path old,new` compares, side by side, the old path (spares started cold, each task's first
verdict waiting for its baselines) with the new one (spares forked from the zygote, the timed
tasks' baselines prefetched and the torch.compile one deferred: `defer_compile`).
`vs 1 worker`: throughput against one worker of the first row (2.00x at 2 workers is perfect
scaling). `vs old`: with `--path old,new`, each new-path row's throughput against the old-path row
of the same quiet mode, spares and workers (issue 20's target: 2x at equal spares).
Uses Ray core only (no dashboard, no ray[default] features).
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from farm_mix import MIXES, mix_tasks  # noqa: E402

from jobs.demo import CPU_VERIFY  # noqa: E402 - the interpreter is slow: few timed runs, as in kgym demo
from kgym.verify.parent.sandbox import Sandbox  # noqa: E402

# --path: (zygote, baselines prefetched and torch.compile deferred)
PATHS = {"old": ("off", False), "new": ("on", True)}


def _keeper(out: list, what: str, t0: float):
    """A callback that keeps each result in `out` and prints a progress line for it to stderr."""
    def keep(r) -> None:
        out.append(r)
        print(f"  {what}: {len(out)} done ({r.outcome}, verify {r.verify_s or 0:.1f} s) "
              f"at {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return keep


def _collect(results, what: str, t0: float) -> list:
    """The pool's results as they arrive, with a progress line for each."""
    out: list = []
    keep = _keeper(out, what, t0)
    for r in results:
        keep(r)
    return out


def _spans(results) -> dict[str, list[tuple[float, float]]]:
    """Per worker, (start, finish) of each verification in epoch seconds (the workers' clocks), in start order."""
    by_worker: dict[str, list] = {}
    for r in results:
        if r.worker_id is not None and r.started_at and r.finished_at:
            by_worker.setdefault(r.worker_id, []).append((r.started_at, r.finished_at))
    return {w: sorted(spans) for w, spans in by_worker.items()}


def idle_gaps_ms(results) -> list[float]:
    """Per worker, milliseconds between one record's finish and the next record's start (worker clocks)."""
    return [1e3 * (start - prev_end) for spans in _spans(results).values()
            for (_, prev_end), (start, _) in zip(spans, spans[1:])]


def time_shares(results, workers: int, t0: float, t1: float) -> dict[str, float]:
    """Where the workers' time between t0 and t1 (epoch seconds, the driver's clock on the same hosts)
    went, as fractions summing to 1: `busy` verifying and building the row, `between` two
    verifications of the same worker (return, dispatch), `before` the worker's first one, `after` its
    last one (the tail, while other workers finish). A worker that got nothing counts as `before`."""
    total = workers * (t1 - t0)
    spans = _spans(results)
    busy = sum(end - start for ss in spans.values() for start, end in ss)
    between = sum(max(0.0, b[0] - a[1]) for ss in spans.values() for a, b in zip(ss, ss[1:]))
    before = sum(max(0.0, ss[0][0] - t0) for ss in spans.values()) + (workers - len(spans)) * (t1 - t0)
    after = sum(max(0.0, t1 - ss[-1][1]) for ss in spans.values())
    return {k: v / total for k, v in (("busy", busy), ("between", between), ("before", before), ("after", after))}


def measure(workers: int, mix: str, tasks, candidates: int, gpu: bool, spares: int, max_in_flight: int,
            cache_dir: str, compile_baseline: bool = True, quiet_mode: str = Sandbox.DEFAULT_QUIET_MODE,
            records: str | None = None, zygote: bool = Sandbox.DEFAULT_ZYGOTE, prefetch: bool = False,
            fresh_seed: int | None = None) -> dict:
    import ray
    from farm_mix import mix_requests

    from jobs.demo_report import gate_of, unmet
    from jobs.stream import stream
    from ray_cluster import PoolConfig, RecordsConfig, RecordSink, SinkConfig, VerifierPool, WorkerConfig

    t_start = time.perf_counter()
    verify = ({} if compile_baseline else {"measure_compile": False}) if gpu else dict(CPU_VERIFY)
    if prefetch:
        verify["defer_compile"] = True  # scored vs eager: no verdict waits for a torch.compile baseline
    config = PoolConfig(workers=workers, use_gpus=gpu, max_in_flight=max_in_flight,
                        worker=WorkerConfig(spares=spares, cache_dir=cache_dir, verify=verify,
                                            quiet_mode=quiet_mode, zygote=zygote))
    tag = (f"{mix}-{quiet_mode}-{spares}-{'zygote' if zygote else 'popen'}-{workers}"
           f"{'-prefetch' if prefetch else ''}{'' if fresh_seed is None else f'-seed{fresh_seed}'}")
    warm_requests, _ = mix_requests("solutions", tasks, len(tasks) * workers, f"warm-{tag}")
    timed_requests, expect = mix_requests(mix, tasks, candidates, f"timed-{tag}", fresh_seed=fresh_seed)
    # As the jobs do (jobs.context): the service is started with the sink and sends it every row as it
    # completes (the warm-up's rows too, which also starts the sink's process before the timed window).
    sink = (RecordSink.remote(SinkConfig(RecordsConfig(out=records, run_id=f"farm-throughput-{tag}-{int(time.time())}",
                                                       job_id="farm_throughput"))) if records else None)
    with VerifierPool(config, sink=sink) as pool:
        warm = _collect(pool.run(warm_requests), "warm-up", t_start)
        warm_s = time.perf_counter() - t_start
        if sink is not None:
            pool.drain()
        t0, t0_epoch = time.perf_counter(), time.time()
        if prefetch:  # told when the candidates are known, as an RL step tells it when it draws its tasks
            pool.prefetch(timed_requests)
        if sink is None:
            results = _collect(pool.run(timed_requests), "timed", t0)
        else:  # rows flushed to Parquet by the sink; stream waits for the last ones
            results = []
            stream(pool, sink, timed_requests, on_result=_keeper(results, "timed", t0))
        wall, t1_epoch = time.perf_counter() - t0, time.time()
        run_path = ray.get(sink.close.remote()).run_path if sink is not None else None
        stats = pool.stats
    verify_s = [r.verify_s for r in results if r.verify_s is not None]
    per_eval_worker_s = wall * workers / len(results)
    gaps = idle_gaps_ms(results)
    latency = sorted(r.latency_s for r in results)
    gates: dict[str, int] = {}
    for r in results:
        gates[gate_of(r)] = gates.get(gate_of(r), 0) + 1
    misses = unmet(results, expect)
    return {
        "workers": workers, "mix": mix, "quiet_mode": quiet_mode, "spares": spares, "zygote": zygote,
        "prefetch": prefetch, "fresh_seeds": fresh_seed is not None,
        "device": "gpu" if gpu else "cpu",
        "candidates": len(results),
        "passed": sum(r.outcome == "passed" for r in results),
        "as_expected": len(results) - len(misses), "unmet": misses[:10], "gates": gates,
        "farm_errors": sum(r.outcome == "error" for r in results) + sum(r.outcome == "error" for r in warm),
        "wall_s": wall, "candidates_per_min": 60 * len(results) / wall,
        "verify_s_mean": statistics.fmean(verify_s), "verify_s_median": statistics.median(verify_s),
        "verify_s_p90": _pct(sorted(verify_s), 0.9),
        "overhead_ms_per_eval": 1e3 * (per_eval_worker_s - statistics.fmean(verify_s)),
        "idle_gap_ms_median": statistics.median(gaps) if gaps else None,
        "idle_gap_ms_p90": _pct(sorted(gaps), 0.9) if gaps else None,
        "time_shares": time_shares(results, workers, t0_epoch, t1_epoch),
        "latency_s_p50": _pct(latency, 0.5), "latency_s_p90": _pct(latency, 0.9), "latency_s_p99": _pct(latency, 0.99),
        "warmup_s": warm_s, "workers_replaced": stats.replaced, "retried": stats.retried, "records": run_path,
    }


def _pct(sorted_values: list[float], q: float) -> float:
    """The q-quantile by nearest rank."""
    rank = math.ceil(q * len(sorted_values) - 1e-9)  # 0.9 * 100 is 90.00000000000001 in floats
    return sorted_values[min(len(sorted_values) - 1, max(0, rank - 1))]


def _path_key(row: dict) -> tuple:
    return row["quiet_mode"], row["spares"], row["workers"]


def _vs_old(row: dict, old_rows: dict[tuple, dict]) -> str:
    """A new-path row's throughput against the old-path row with the same mode, spares and workers."""
    old = old_rows.get(_path_key(row))
    if old is None or old is row or not (row["prefetch"] or row["zygote"]) or not old["candidates_per_min"]:
        return "-"
    return f"{row['candidates_per_min'] / old['candidates_per_min']:.2f}x"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", help="comma-separated worker counts (default 1..N: GPUs, or CPU cores)")
    p.add_argument("--size", choices=["tiny", "small", "full"], help="task size (default full on GPU, tiny on CPU)")
    p.add_argument("--candidates", type=int, default=32, help="timed candidates per worker count (default 32)")
    p.add_argument("--spares", help="comma list of warm candidate processes per worker, each measured "
                                    "(default: the farm's, 8 on GPU and 1 on CPU)")
    p.add_argument("--mix", default="solutions", choices=MIXES,
                   help="what is verified (benchmarks/farm_mix.py): 'solutions' of four short tasks (default), or "
                        "'realistic': every family's first task, good, wrong and crashing answers")
    p.add_argument("--records", metavar="DIR", help="stream every timed result to a RecordSink under DIR (Parquet), "
                                                    "as the jobs do, so the records' cost is in the figures")
    p.add_argument("--plot", metavar="PNG", help="candidates/min against workers, with perfect scaling drawn in")
    p.add_argument("--max-in-flight", type=int, default=2, help="calls queued per worker (default 2)")
    p.add_argument("--num-cpus", type=int, help="CPUs of the embedded Ray (default: all)")
    p.add_argument("--no-compile", action="store_true",
                   help="skip the torch.compile baseline on GPU (its first max-autotune per task takes 20-60 s)")
    p.add_argument("--quiet-mode", default=Sandbox.DEFAULT_QUIET_MODE,
                   help="comma list of what a worker does with spares still warming when it times a short kernel: "
                        "'pause' them (SIGSTOP, the default) or 'wait' for them; each is measured, side by side")
    p.add_argument("--zygote", default="on" if Sandbox.DEFAULT_ZYGOTE else "off",
                   help="on: spares forked from the zygote (the default), off: started cold with Popen; 'on,off' "
                        "measures both, side by side in one run (docs/spares.md)")
    p.add_argument("--fresh-seeds", action="store_true",
                   help="every timed candidate's task drawn again with a new seed (new shapes, no cached baseline)")
    p.add_argument("--path", help="comma list of old (spares started cold, verdicts wait for baselines) and new "
                                  "(spares forked, baselines prefetched and torch.compile deferred); overrides "
                                  "--zygote")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH ('-' for stdout)")
    args = p.parse_args(argv)

    modes = args.quiet_mode.split(",")
    bad = [m for m in modes if m not in Sandbox.QUIET_MODES]
    if bad:
        p.error(f"--quiet-mode {','.join(bad)}: use pause, wait or both (pause,wait)")
    zygotes = [z.strip() for z in args.zygote.split(",")]
    if not zygotes or any(z not in ("on", "off") for z in zygotes):
        p.error(f"--zygote {args.zygote}: use on, off, or both (on,off)")
    if args.path:
        paths = [x.strip() for x in args.path.split(",")]
        if any(x not in PATHS for x in paths):
            p.error(f"--path {args.path}: use old, new, or both (old,new)")
        setups = [PATHS[x] for x in paths]  # (zygote, prefetch)
    else:
        setups = [(z, False) for z in zygotes]
    try:
        spare_counts = [int(x) for x in args.spares.split(",")] if args.spares else None
    except ValueError:
        p.error(f"--spares {args.spares}: use whole numbers, comma-separated (4 or 4,8)")
    if spare_counts and min(spare_counts) < 0:
        p.error(f"--spares {args.spares}: a worker keeps zero or more spares")

    import ray

    from kgym.farm.farm_config import default_spares
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
        tasks = mix_tasks(args.mix, size)
        spare_counts = spare_counts or [default_spares("cuda" if gpu else "cpu")]
        cache_dir = os.environ.get("KGYM_CACHE_DIR") or tempfile.mkdtemp(prefix="kgym-bench-baselines-")
        device = (ray.get(ray.remote(num_gpus=1)(_gpu_name).remote()) if gpu else "CPU (Triton interpreter)")
        rows = []
        for (zygote, prefetch), mode, spares, w in itertools.product(setups, modes, spare_counts, counts):
            print(f"{w} worker(s), {args.mix} mix, quiet mode {mode}, {spares} spare(s), zygote {zygote}"
                  f"{', baselines prefetched' if prefetch else ''}{', fresh seeds' if args.fresh_seeds else ''}: "
                  f"warming up and verifying {args.candidates} candidates ...", file=sys.stderr, flush=True)
            # each row its own seeds: no row finds another's baselines cached
            fresh_seed = 1_000_000 * (1 + len(rows)) if args.fresh_seeds else None
            rows.append(measure(w, args.mix, tasks, args.candidates, gpu, spares, args.max_in_flight, cache_dir,
                                compile_baseline=not args.no_compile, quiet_mode=mode, records=args.records,
                                zygote=zygote == "on", prefetch=prefetch, fresh_seed=fresh_seed))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        base = rows[0]["candidates_per_min"] / rows[0]["workers"]
        old_rows = {_path_key(r): r for r in rows if not r["prefetch"] and not r["zygote"]}
        print(f"\nfarm throughput on {device}, size {size}, {args.mix} mix ({', '.join(t.task_id for t in tasks)}), "
              f"{args.candidates} candidates, max {args.max_in_flight} in flight per worker"
              f"{', records to ' + args.records if args.records else ''}")
        print(f"{'zygote':>8} {'quiet':>5} {'spares':>6} {'workers':>7} {'cand/min':>9} {'vs 1 worker':>11} "
              f"{'vs old':>6} {'expected':>8} "
              f"{'verify s mean/p90':>17} {'latency s p50/p90/p99':>21} {'overhead ms/eval':>16} "
              f"{'idle gap ms':>11} {'busy/between/before/after %':>27} {'wall s':>7} {'replaced':>8}")
        for r in rows:
            gap = "-" if r["idle_gap_ms_median"] is None else f"{r['idle_gap_ms_median']:.1f}"
            lat = f"{r['latency_s_p50']:.1f}/{r['latency_s_p90']:.1f}/{r['latency_s_p99']:.1f}"
            shares = "/".join(f"{100 * r['time_shares'][k]:.0f}" for k in ("busy", "between", "before", "after"))
            print(f"{'on' if r['zygote'] else 'off':>6}{'+p' if r['prefetch'] else '  '} {r['quiet_mode']:>5} "
                  f"{r['spares']:>6} {r['workers']:>7} "
                  f"{r['candidates_per_min']:>9.1f} "
                  f"{r['candidates_per_min'] / base:>10.2f}x {_vs_old(r, old_rows):>6} "
                  f"{r['as_expected']:>4}/{r['candidates']:<3} "
                  f"{r['verify_s_mean']:>8.2f}/{r['verify_s_p90']:<8.2f} {lat:>21} {r['overhead_ms_per_eval']:>16.1f} "
                  f"{gap:>11} {shares:>27} {r['wall_s']:>7.1f} {r['workers_replaced']:>8}")
        for r in rows:
            print(f"  zygote {'on' if r['zygote'] else 'off'}, {r['quiet_mode']}, {r['spares']} spares, {r['workers']} "
                  f"worker(s): gates {r['gates']}"
                  + "".join(f"\n    not as expected: {m}" for m in r["unmet"]))
        if args.plot:
            _plot(rows, base, args.plot, f"{device}, {args.mix} mix, size {size}")
            print(f"plot: {args.plot}")
        if args.json:
            out = json.dumps({"device": device, "size": size, "mix": args.mix, "tasks": [t.task_id for t in tasks],
                              "max_in_flight": args.max_in_flight, "results": rows}, indent=2)
            if args.json == "-":
                print(out)
            else:
                Path(args.json).write_text(out + "\n")
        return 0 if all(r["farm_errors"] == 0 and r["as_expected"] == r["candidates"] for r in rows) else 1
    finally:
        if started:
            ray.shutdown()


def _plot(rows: list[dict], base: float, path: str, title: str) -> None:
    """Candidates per minute against workers, one line per (quiet mode, spares), and perfect scaling."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    most = max(r["workers"] for r in rows)
    ax.plot([0, most], [0, base * most], linestyle="--", color="grey", label="perfect scaling")
    for key in sorted({(r["quiet_mode"], r["spares"]) for r in rows}):
        line = sorted((r["workers"], r["candidates_per_min"]) for r in rows if (r["quiet_mode"], r["spares"]) == key)
        ax.plot(*zip(*line), marker="o", label=f"{key[0]}, {key[1]} spare(s) per worker")
    ax.set_xlabel("verifier workers")
    ax.set_ylabel("candidates per minute")
    ax.set_title(title, fontsize=9)
    ax.set_xticks(sorted({r["workers"] for r in rows}))
    ax.set_xlim(0, most + 0.5)
    ax.set_ylim(0, None)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _gpu_name() -> str:
    import torch

    return torch.cuda.get_device_name(0)


if __name__ == "__main__":
    sys.exit(main())
