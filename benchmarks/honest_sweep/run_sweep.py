"""The honest-side sweep of 2026-12-07 (verifier 24): honest Triton answers, written as a model would write
them, to KernelBench level 1 and 2 problems shrunk for the CPU's interpreter, and to a few problems of the
same kind in refs/, each verified by the same Verifier the tests use. An answer's header names its problem
(`# problem: level1/FILE.py` with `# sizes: name=value,...`, read from the KernelBench checkout the tests
use) or its reference (`# reference: refs/FILE.py`). Prints one JSON line per answer and seed: passed, or
the gate, its reason and the failing cases. Usage:

    SEEDS=0,1 python benchmarks/honest_sweep/run_sweep.py [ANSWER.py ...]
"""

import json
import os
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "fixtures"))

from kgym.verify import Verifier, VerifyConfig  # noqa: E402

from paths import shared_kernelbench  # noqa: E402


def problem_for(answer: str) -> str:
    head = dict(re.findall(r"^# (\w+): (.*)$", answer, re.M))
    if "problem" in head:
        source = (shared_kernelbench() / "KernelBench" / head["problem"]).read_text()
    else:
        source = (HERE / head["reference"]).read_text()
    for name, value in re.findall(r"(\w+)=(\([^)]*\)|[^,]+)", head.get("sizes", "")):
        source, n = re.subn(rf"^{name}\s*=.*$", f"{name} = {value.strip()}", source, flags=re.M)
        assert n == 1, (name, n)
    return source


def main() -> None:
    names = sys.argv[1:] or sorted(p.name for p in HERE.glob("[0-9]*.py"))
    seeds = [int(s) for s in os.environ.get("SEEDS", "0,1").split(",")]
    config = VerifyConfig(device="cpu", timed_runs=3, warmup_runs=1, max_remeasure=1)
    with Verifier(config, spares=1, case_secret=b"kgym-honest-sweep") as v:
        for name in names:
            answer = (HERE / name).read_text()
            reference = problem_for(answer)
            for seed in seeds:
                t = time.time()
                r = v.verify(reference, answer, seed=seed)
                bad = [(c.name, c.note[:160]) for c in r.cases if not c.passed]
                print(json.dumps({"answer": name, "seed": seed, "passed": r.passed, "gate": r.gate,
                                  "reason": (r.reason or "")[:300], "bad_cases": bad,
                                  "error": r.error and r.error[:300], "s": round(time.time() - t, 1)}), flush=True)


if __name__ == "__main__":
    main()
