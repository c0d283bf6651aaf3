"""The RL job's learning demonstration on a CPU: SFT'd tiny model, toy curriculum, real verifier.

    python benchmarks/rl_learning.py [--steps 24] [--root out/rl_learning] [--reuse]

Builds the toy path (tests/rljob/toy/toy.py: tiny base model, `jobs.curate` on the toy KernelBook
file, the toy SFT set, `jobs.sft`), then runs `python -m jobs.rl --config jobs/configs/rl_toy.toml`
twice from the SFT adapter with the same seeds, one after the other:
trained, and the frozen-policy control (`learner.lr=0.0`). Writes ROOT/rl_learning.json (mean
reward per step of both, the set-up, the times) and the plot docs/img/rl_learning.png (mean reward
per step, trained vs control, with a moving mean). `--reuse` keeps an existing ROOT's base model
and adapter (skips the SFT path). docs/rl.md ("Learning demonstration") reports a run of this script.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "rljob" / "toy"))

import toy  # noqa: E402 - the toy folder is on sys.path from here on

PLOT = REPO / "docs" / "img" / "rl_learning.png"


def moving_mean(xs: list[float], k: int) -> list[float]:
    return [sum(xs[max(0, i - k + 1):i + 1]) / len(xs[max(0, i - k + 1):i + 1]) for i in range(len(xs))]


def plot(rewards: dict[str, list[float]], path: Path, title: str, window: int = 6) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=120)
    for arm, color in ((toy.TRAINED, "tab:blue"), (toy.CONTROL, "tab:gray")):
        ys = rewards[arm]
        xs = list(range(1, len(ys) + 1))
        label = "trained (CISPO)" if arm == toy.TRAINED else "frozen-policy control (lr 0)"
        ax.plot(xs, ys, "o", color=color, alpha=0.35, markersize=4)
        ax.plot(xs, moving_mean(ys, window), "-", color=color, linewidth=2, label=f"{label}, {window}-step mean")
    ax.axhline(0.5, color="tab:green", linestyle=":", linewidth=1)
    ax.text(1, 0.505, "every answer right (0.5: correctness share; no speed credit on the CPU)", fontsize=7,
            color="tab:green", va="bottom")
    ax.set_xlabel("RL step (jobs/configs/rl_toy.toml: two tasks a step, a group of 8 single-turn answers each)")
    ax.set_ylabel("mean reward of the step's answers")
    ax.set_ylim(-0.02, 0.58)
    ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp)
    plt.close(fig)
    tmp.rename(path)
    return path


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--root", type=Path, default=REPO / "out" / "rl_learning")
    ap.add_argument("--reuse", action="store_true", help="reuse ROOT's base model and SFT adapter")
    ap.add_argument("--plot", type=Path, default=PLOT)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra jobs.rl override")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    t0 = time.perf_counter()
    if args.reuse and (root / "sft" / "adapter").is_dir():
        prepared = toy.Prepared(root / "base", root / "toy_sft.parquet", root / "sft" / "adapter", 2, None)
    else:
        prepared = toy.prepare(root)
    t_prep = time.perf_counter() - t0
    t = time.perf_counter()
    runs = toy.run_arms(prepared, root, args.steps, tuple(args.set))
    times = {"prepare_s": t_prep, "rl_both_arms_s": time.perf_counter() - t}
    rewards = {arm: toy.step_rewards(run) for arm, run in runs.items()}
    for arm, r in rewards.items():
        print(f"{arm}: {' '.join(f'{x:.3f}' for x in r)}", flush=True)
    k = max(1, args.steps // 3)
    summary = {"steps": args.steps, "rewards": rewards, "times_s": times, "last_k": k,
               **{f"{arm}_first_k": sum(r[:k]) / k for arm, r in rewards.items()},
               **{f"{arm}_last_k": sum(r[-k:]) / k for arm, r in rewards.items()},
               "overrides": args.set, "adapter": str(prepared.adapter)}
    (root / "rl_learning.json").write_text(json.dumps(summary, indent=1))
    title = (f"jobs.rl on the toy curriculum (silu-v1, relu-v1; tiny CPU model after jobs.sft), real CPU verifier\n"
             f"last {k} steps: trained {summary['trained_last_k']:.3f}, control {summary['control_last_k']:.3f}")
    plot(rewards, args.plot, title)
    print(json.dumps({k2: v for k2, v in summary.items() if k2 != "rewards"}, indent=1))
    print(f"plot: {args.plot}")
    return summary


if __name__ == "__main__":
    main()
