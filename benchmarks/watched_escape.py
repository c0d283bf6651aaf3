"""How often a candidate that computes honestly only when it believes it is checked gets through, and
what it earns: the attacks of tests/exploits/watched_sources.py (a signal that tells the hidden cases
from the timed runs, a payload that cheats in the timed runs), each verified over several seeds on
the CPU (Triton interpreter) under the GPU's timed-run protocol (100 timed runs, 5 warm-up), so the
verifier's own check rate is the one a GPU verdict has.

    python benchmarks/watched_escape.py [--seeds 10] [--runs 100] [--warmup 5] \
        [--attacks call_count:unsafe_softmax,...] [--json OUT.json]

Each verdict is independent (the public seed k gives the hidden cases' seeds; the timed draws and,
before verifier 15, the check coins come from the verifier's secret generator). Printed per attack:
verdicts passed (escapes), the mean reward, the gates of the rejections, and seconds per verdict.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "exploits"))
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))

from watched_sources import PAYLOADS, POLICY_OFF, SIGNALS, attack, reference_of  # noqa: E402

from kgym.contract.version import VERIFIER_VERSION  # noqa: E402
from kgym.reward import reward  # noqa: E402
from kgym.verify import Verifier, VerifyConfig  # noqa: E402

from paths import fixture_source  # noqa: E402

DEFAULT_ATTACKS = [f"{s}:unsafe_softmax" for s in SIGNALS] + ["call_count:skip"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--runs", type=int, default=100, help="timed runs (the GPU's default: 100)")
    ap.add_argument("--warmup", type=int, default=5, help="warm-up runs (the GPU's default: 5)")
    ap.add_argument("--attacks", default=",".join(DEFAULT_ATTACKS), help="signal:payload,...")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    attacks = [tuple(a.split(":")) for a in args.attacks.split(",")]
    for signal, payload in attacks:
        if signal not in SIGNALS or payload not in PAYLOADS:
            ap.error(f"unknown attack {signal}:{payload}")
    cfg = VerifyConfig(device="cpu", timed_runs=args.runs, warmup_runs=args.warmup, max_remeasure=0)
    print(f"{VERIFIER_VERSION}: {args.seeds} seeds, {args.runs} timed runs + {args.warmup} warm-up", flush=True)
    out = []
    with Verifier(cfg, spares=1) as verifier:
        for signal, payload in attacks:
            ref = fixture_source(reference_of(payload), "reference")
            src = attack(signal, payload)
            rewards, gates, secs = [], collections.Counter(), []
            for seed in range(args.seeds):
                t0 = time.perf_counter()
                v = verifier.verify(ref, src, seed=seed, static_policy=signal not in POLICY_OFF)
                secs.append(time.perf_counter() - t0)
                if v.error:
                    raise SystemExit(f"kgym error on {signal}:{payload} seed {seed}:\n{v.error}")
                rewards.append(reward(v))
                gates["passed" if v.passed else f"{v.gate} ({v.cases_passed}/6 cases)"] += 1
            row = {"signal": signal, "payload": payload, "seeds": args.seeds, "escaped": gates["passed"],
                   "mean_reward": statistics.mean(rewards), "verdicts": dict(gates),
                   "s_per_verdict": statistics.median(secs)}
            out.append(row)
            print(f"  {signal:12s} {payload:15s} escaped {row['escaped']}/{args.seeds}  mean reward "
                  f"{row['mean_reward']:.3f}  {dict(gates)}  {row['s_per_verdict']:.1f} s/verdict", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"version": VERIFIER_VERSION, "runs": args.runs,
                                               "warmup": args.warmup, "attacks": out}, indent=2))


if __name__ == "__main__":
    main()
