"""Spare start: time to ready and host memory per spare, cold Popen against a fork of the zygote.

`ready` is what the child says today once it has done its whole start: torch and Triton imported
(the zygote did that once, ahead), the device up (the CUDA context on a GPU), the warm-up Triton
kernel compiled (into the process's own, empty cache dir) and launched, the first dispatch-mode op
and a profiled launch (kgym/verify/candidate/child.py: Child.warm_up). Each batch starts 1 or N processes at
once, as a Sandbox refills its spares, tells them to warm (as Sandbox does outside a quiet block)
and times each one from the batch's start to its `ready` message. The zygote itself is started
once per run, before the batches, as a worker starts it once per sandbox: its start is reported on
its own line. Memory: RSS, PSS and private (USS) per ready spare from /proc/<pid>/smaps_rollup
(forked pages are shared with the zygote and the siblings until written, so PSS and USS, not RSS,
say what a spare costs the host). Modes alternate batch by batch, side by side in one run. With
--triton-seed a third mode forks spares whose Triton cache is seeded with the warm-up's compiled
entries (Sandbox(triton_seed=True)), taken from the sandbox's first forked spare, which runs before
the batches and is reported on its own line; the other modes compile them.

    python benchmarks/spare_start.py [--device cpu|cuda] [--spares 8] [--rounds 2] [--triton-seed] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import selectors
import socket
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgym.verify.parent.sandbox import CandidateProcess, Sandbox  # noqa: E402

MODES = ("popen", "zygote")
SEEDED = "zygote+seed"  # forked, with the Triton seed (Sandbox(triton_seed=True)); --triton-seed


def smaps_rollup(pid: int) -> dict[str, float]:
    """RSS, PSS and private (USS) of a process, in MiB (None where /proc refuses: another uid)."""
    out = {"rss_mib": None, "pss_mib": None, "uss_mib": None}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            kb = {line.split(":")[0]: int(line.split()[1]) for line in f if line.split()[-1:] == ["kB"]}
    except (OSError, ValueError, IndexError):
        return out
    out["rss_mib"] = kb.get("Rss", 0) / 1024
    out["pss_mib"] = kb.get("Pss", 0) / 1024
    out["uss_mib"] = (kb.get("Private_Clean", 0) + kb.get("Private_Dirty", 0)) / 1024
    return out


def run_batch(mode: str, n: int, device: str, sandbox: Sandbox, timeout: float) -> dict:
    t0 = time.monotonic()
    procs = [sandbox._new_process() if mode == SEEDED
             else CandidateProcess(device, zygote=sandbox.zygote) if mode == "zygote"
             else CandidateProcess(device) for _ in range(n)]
    spawned = time.monotonic() - t0
    for p in procs:
        p.warm()
    ready_s: dict[int, float] = {}
    sel = selectors.DefaultSelector()
    for i, p in enumerate(procs):
        sel.register(p.sock, selectors.EVENT_READ, i)
    try:
        while len(ready_s) < n:
            left = timeout - (time.monotonic() - t0)
            if left <= 0:
                raise RuntimeError(f"{mode}: {n - len(ready_s)} of {n} spares not ready within {timeout:.0f} s")
            for key, _ in sel.select(left):
                i = key.data
                procs[i].wait_ready(timeout)  # the message is there: this reads it
                ready_s[i] = time.monotonic() - t0
                sel.unregister(key.fileobj)
        mem = [smaps_rollup(p.proc.pid) for p in procs]
        warm = [p.ready_info.get("warm_s") for p in procs]
    finally:
        sel.close()
        for p in procs:
            p.kill()
    times = [ready_s[i] for i in range(n)]

    def mean(key: str) -> float | None:
        vals = [m[key] for m in mem if m[key] is not None]
        return statistics.fmean(vals) if vals else None

    return {"mode": mode, "spares": n, "ready_median_s": statistics.median(times), "ready_max_s": max(times),
            "ready_s": times, "spawn_s": spawned, "device_part_s": warm, "seeded": [p.seeded for p in procs],
            "rss_mib": mean("rss_mib"), "pss_mib": mean("pss_mib"), "uss_mib": mean("uss_mib")}


def machine(device: str) -> dict:
    import torch
    import triton

    info = {"host": socket.gethostname(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "torch": torch.__version__, "triton": triton.__version__, "device": device,
            "date": time.strftime("%Y-%m-%d %H:%M %Z")}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        with open("/proc/loadavg") as f:
            info["loadavg_at_start"] = f.read().split()[:3]
    except OSError:
        pass
    if device.startswith("cuda") and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:N] (default cpu)")
    ap.add_argument("--spares", type=int, default=8, help="N, the spares started at once in the second batch (8)")
    ap.add_argument("--rounds", type=int, default=2, help="batches of each size and mode (medians over them)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds a batch may take")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--triton-seed", action="store_true",
                    help="also time forked spares with the Triton seed (GPU: the warm-up's cache entries)")
    args = ap.parse_args()
    modes = MODES + ((SEEDED,) if args.triton_seed else ())
    device = "cuda:0" if args.device == "cuda" else args.device
    if args.spares < 1 or args.rounds < 1:
        ap.error("--spares and --rounds must be at least 1")
    info = machine(device)
    print(f"spare start on {info.get('gpu', info.get('cpu', '?'))}, {info['cpus']} CPUs, host {info['host']}, "
          f"{info['date']}, torch {info['torch']}, triton {info['triton']}", flush=True)

    t0 = time.monotonic()
    sandbox = Sandbox(device, spares=0, zygote=True, triton_seed=args.triton_seed)
    hello = sandbox.zygote.wait_hello(args.timeout)
    zygote = {"start_s": time.monotonic() - t0, "import_s": hello.get("import_s"), **smaps_rollup(sandbox.zygote.pid),
              "threads_at_hello": hello.get("thread_names"), "cuda_initialized": hello.get("cuda_initialized"),
              "cuda_driver_initialized": hello.get("cuda_driver_initialized"),
              "libcuda_mapped": hello.get("libcuda_mapped"), "device_fds": hello.get("device_fds")}
    print(f"zygote: started in {zygote['start_s']:.2f} s (its imports), RSS {zygote['rss_mib']:.0f} MiB, "
          f"PSS {zygote['pss_mib']:.0f} MiB; torch CUDA initialised: {zygote['cuda_initialized']}, driver "
          f"initialised: {zygote['cuda_driver_initialized']}, libcuda loaded: {zygote['libcuda_mapped']}, device "
          f"files open: {zygote['device_fds']}; threads at hello: {zygote['threads_at_hello']}", flush=True)
    rows = []
    try:
        # The sandbox's first forked spare: compiles the warm-up's Triton helpers and kernel into its own
        # cache (nothing is seeded yet) and, once ready, seeds the spares after it
        # (kgym.verify.parent.sandbox.TritonSeed)
        first = run_batch(SEEDED if args.triton_seed else "zygote", 1, device, sandbox, args.timeout)
        zygote["first_spare_ready_s"] = first["ready_max_s"]
        zygote["seed_taken"] = sandbox.triton_seed.dir is not None
        print(f"the sandbox's first forked spare (nothing to seed it yet): ready in {first['ready_max_s']:.2f} s; "
              f"Triton cache seed taken: {zygote['seed_taken']}", flush=True)
        sizes = [1] if args.spares == 1 else [1, args.spares]
        for r in range(args.rounds):
            for n in sizes:
                for mode in (modes if r % 2 == 0 else modes[::-1]):
                    row = run_batch(mode, n, device, sandbox, args.timeout)
                    row["round"] = r
                    rows.append(row)
                    print(f"  round {r} {mode:>11} x{n}: ready median {row['ready_median_s']:.2f} s, max "
                          f"{row['ready_max_s']:.2f} s (spawn {row['spawn_s'] * 1e3:.0f} ms for all), "
                          f"PSS {row['pss_mib'] or float('nan'):.0f} MiB per spare"
                          + (", seeded" if all(row["seeded"]) else ""), flush=True)
        zygote_after = sandbox.zygote.status()
    finally:
        sandbox.close()

    summary = []
    for n in sizes:
        line = {"spares": n}
        for mode in modes:
            rs = [r for r in rows if r["mode"] == mode and r["spares"] == n]
            line[mode] = {k: statistics.median(r[k] for r in rs) for k in
                          ("ready_median_s", "ready_max_s", "spawn_s", "rss_mib", "pss_mib", "uss_mib")
                          if all(r[k] is not None for r in rs)}
        line["ratio_ready_max"] = line["popen"]["ready_max_s"] / line["zygote"]["ready_max_s"]
        line["ratio_ready_median"] = line["popen"]["ready_median_s"] / line["zygote"]["ready_median_s"]
        if "pss_mib" in line["popen"] and "pss_mib" in line["zygote"]:
            line["ratio_pss"] = line["popen"]["pss_mib"] / line["zygote"]["pss_mib"]
        summary.append(line)

    print(f"\n{'spares':>6} {'mode':>11} {'ready med s':>11} {'ready max s':>11} {'spawn ms':>9} {'RSS MiB':>8} "
          f"{'PSS MiB':>8} {'USS MiB':>8}")
    for line in summary:
        for mode in modes:
            m = line[mode]
            print(f"{line['spares']:>6} {mode:>11} {m['ready_median_s']:>11.2f} {m['ready_max_s']:>11.2f} "
                  f"{m['spawn_s'] * 1e3:>9.0f} {m.get('rss_mib', float('nan')):>8.0f} "
                  f"{m.get('pss_mib', float('nan')):>8.0f} {m.get('uss_mib', float('nan')):>8.0f}")
        print(f"{line['spares']:>6}   ratio popen/zygote: ready {line['ratio_ready_median']:.1f}x (median), "
              f"{line['ratio_ready_max']:.1f}x (last spare); PSS {line.get('ratio_pss', float('nan')):.1f}x")
        if SEEDED in line:
            line["ratio_ready_max_seeded"] = line["popen"]["ready_max_s"] / line[SEEDED]["ready_max_s"]
            print(f"{line['spares']:>6}   ratio popen/zygote+seed: ready {line['ratio_ready_max_seeded']:.1f}x "
                  f"(last spare)")
    print(f"zygote after the run: threads {zygote_after.get('threads')}, torch CUDA initialised "
          f"{zygote_after.get('cuda_initialized')}, driver initialised {zygote_after.get('cuda_driver_initialized')}, "
          f"device files open {zygote_after.get('device_fds')}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "zygote": zygote, "zygote_after": zygote_after, "summary": summary,
                       "rows": rows}, f, indent=1)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
