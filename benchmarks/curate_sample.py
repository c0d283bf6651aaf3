"""Curate the project's KernelBook sample at full scale (~1M elements) and time it, row by row.

    python benchmarks/curate_sample.py                          # on a GPU machine: the farm, one worker per GPU
    python benchmarks/curate_sample.py --backend local          # one Verifier in this process, no Ray
    python benchmarks/curate_sample.py --input kb.parquet --kernelbench ../KernelBench \
        --tokenizer Qwen/Qwen2.5-7B-Instruct

Runs `jobs.curate` on the sample (kgym/tasks/families/kernelbook/sample.jsonl: four modules with one
answer each) under a fresh run id, so every row is verified at the target scale through every gate
(torch.compile baseline included on a GPU), then prints the funnel, each verified row's gate,
speedups and verification seconds, and the time per row (the job's verification wall clock over
the rows it verified, and the median of the verifier's own seconds). Writes OUT/benchmark.json.
Decontamination uses --kernelbench when given (../shared/kernelbench/KernelBench by default, when
present); the length filter uses --tokenizer when given.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path


def _clean(value):
    """None for a missing value (pandas reads nulls as NaN)."""
    return None if value is None or (isinstance(value, float) and value != value) else value


SHARED_KB = Path(__file__).resolve().parents[1].parent / "shared" / "kernelbench" / "KernelBench"


def _x(speedup) -> str:
    return "not measured" if speedup is None else f"x{speedup:.2f}"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", default="kgym/tasks/families/kernelbook/sample.jsonl")
    ap.add_argument("--backend", choices=["farm", "local"], default="farm")
    ap.add_argument("--workers", type=int, help="farm workers (default: one per GPU)")
    ap.add_argument("--kernelbench", default=str(SHARED_KB) if SHARED_KB.is_dir() else None)
    ap.add_argument("--tokenizer", help="target model tokenizer for the 4,096-token filter")
    ap.add_argument("--target-elements", type=int, default=1 << 20)
    ap.add_argument("--out", default="out/benchmarks/curate_sample")
    ap.add_argument("--run-id", help="default: a fresh one, so nothing is resumed")
    args = ap.parse_args(argv)

    from jobs.context import records_root
    from jobs.curate import CurateJobConfig, run_curate_job
    from jobs.sections import build
    from kgym.records.layout import run_dir
    from kgym.records.reader import load

    out = Path(args.out)
    run_id = args.run_id or f"curate-sample-{int(time.time())}"
    config = build(CurateJobConfig, {
        "backend": args.backend, "records": {"out": str(out / "records"), "run_id": run_id},
        "farm": {} if args.workers is None else {"workers": args.workers},
        "curate": {"input": args.input, "out": str(out), "kernelbench": args.kernelbench, "tokenizer": args.tokenizer,
                   "target_elements": args.target_elements, "size": "full"}})
    t0 = time.perf_counter()
    result = run_curate_job(config)
    wall = time.perf_counter() - t0
    rep = result.report
    df = load(run_dir(records_root(config.records.out), run_id))
    ours = {f.evaluation_id: f for f in result.fates if f.evaluation_id}
    rows = []
    for r in df.to_dict("records"):
        r = {k: _clean(v) if not isinstance(v, (list, tuple)) else v for k, v in r.items()}
        f = ours.get(r["evaluation_id"])
        rows.append({"uuid": f.uuid if f else None, "task_seed": r["task_seed"], "shapes": r["shapes_json"],
                     "answer_mode": r["answer_mode"], "passed": bool(r["passed"]), "gate": r["gate"],
                     "speedup_eager": r["speedup_eager"], "speedup_compile": r["speedup_compile"],
                     "verify_seconds": r["verify_seconds"], "gpu": r["gpu_name"]})
        print(f"{rows[-1]['uuid']}: {'passed' if r['passed'] else 'failed at ' + str(r['gate'])}, "
              f"eager {_x(r['speedup_eager'])}, compile {_x(r['speedup_compile'])}, "
              f"{r['verify_seconds'] or 0:.1f} s verifying, {r['answer_mode']}, {r['gpu_name'] or r['device']}")
    secs = [r["verify_seconds"] for r in rows if r["verify_seconds"]]
    summary = {"run_id": run_id, "backend": args.backend, "wall_s": wall, "counts": rep.counts, "labels": rep.labels,
               "drops": rep.drops, "verified": rep.verified, "verify_wall_s": rep.verify_wall_s,
               "seconds_per_row": rep.seconds_per_verification,
               "median_verifier_seconds": statistics.median(secs) if secs else None, "rows": rows}
    out.mkdir(parents=True, exist_ok=True)
    (out / "benchmark.json").write_text(json.dumps(summary, indent=1, default=str))
    per = rep.seconds_per_verification
    print(f"curate_sample: {rep.verified} rows verified in {rep.verify_wall_s:.1f} s "
          f"({per or 0:.2f} s per row on the job's clock, median {summary['median_verifier_seconds'] or 0:.2f} s "
          f"inside the verifier); {wall:.1f} s in all; {out / 'benchmark.json'}")
    return summary


if __name__ == "__main__":
    main()
