"""Learning evidence on a CPU, against controls, over seeds: does the reward rise because of the
reward, or would it have drifted there anyway?

    python benchmarks/rl_learning.py learner [--seeds 0,1,2,3,4] [--steps 12] [--last 4] [--streams 10]
    python benchmarks/rl_learning.py job [--steps 24] [--root out/rl_learning] [--reuse]
    python benchmarks/rl_learning.py job --rejudge docs/data/rl_learning-2026-12-02.json

`learner` (about 3 minutes on 2 cores): the experiment of tests/rl/test_rl_learning.py
(tests/rl/learning_toy.py: the tiny model, a group of 8 answers of 8 tokens, one CISPO step a step),
for every seed four arms with the same sampling draws: trained on the true reward, frozen (no step),
shuffled (the group's rewards permuted among its answers) and random (uniform rewards); each scored
on the true reward. Each arm is judged against the frozen one by learning_toy.judge (paired bootstrap
of kgym.training.step_rules over the last LAST steps, pairs (seed, step); learned = the 95% interval above 0
pooled and for every seed). Then the false-positive check: the shuffled and random arms over
`--streams` noise streams (other permutations, other random rewards), at the test's seeds and steps
judged by the same rule, and at seed 0 over 16 steps by the rule of the single-seed test this one
replaced (late 6 steps' mean > frozen + 0.2 and > the first 6 steps'). Writes
docs/data/rl_learning-learner-DATE.json and the plot docs/img/rl_learning-DATE.png (reward per step,
mean over seeds with the min-max band; per-seed effects with their intervals).

`job` (~25 min): the RL job's demonstration (tests/rljob/toy/toy.py: the toy SFT path, then
`python -m jobs.rl --config jobs/configs/rl_toy.toml` trained and as the frozen-policy control
`learner.lr=0.0`, same seeds), judged by the same rule over the last third of the steps, pairs
(step); one seed (the job's config). `--rejudge JSON` judges the rewards of an earlier run's JSON
without running anything. docs/rl.md reports both.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "rl"))
sys.path.insert(0, str(REPO / "tests" / "rljob" / "toy"))

import learning_toy as lt  # noqa: E402 - the test helpers' folders are on sys.path from here on

TODAY = dt.date.today().isoformat()
COLORS = {lt.Arm.TRAINED: "tab:blue", lt.Arm.FROZEN: "tab:gray", lt.Arm.SHUFFLED: "tab:orange",
          lt.Arm.RANDOM: "tab:purple"}
LABELS = {lt.Arm.TRAINED: "trained (true reward)", lt.Arm.FROZEN: "frozen policy (no step)",
          lt.Arm.SHUFFLED: "shuffled rewards (negative control)", lt.Arm.RANDOM: "random rewards (negative control)"}
TEST_SEEDS, TEST_STEPS, TEST_LAST = (0, 1, 2), 16, 6  # tests/rl/test_rl_learning.py's
OLD_STEPS, OLD_LAST, OLD_MARGIN = 16, 6, 0.2  # the single-seed test it replaced


def _effect_dict(e: lt.Effect) -> dict:
    return {"delta": e.delta, "ci95": list(e.ci95), "pairs": e.pairs}


def _judgement_dict(j: lt.Judgement) -> dict:
    return {"learned": j.learned, "pooled": _effect_dict(j.pooled),
            "per_seed": {str(s): _effect_dict(e) for s, e in j.per_seed.items()}}


def _write_atomically(path: Path, write) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp" + path.suffix)
    write(tmp)
    tmp.rename(path)
    return path


# -- learner ---------------------------------------------------------------------------------------
def false_positives(model_dir: Path, streams: int, frozen_test: dict[int, list[float]], log=print) -> dict:
    """The negative controls over `streams` noise streams: how often each rule calls them learning."""
    frozen_old = lt.run_arm(model_dir, lt.Arm.FROZEN, 0, OLD_STEPS)
    need = sum(frozen_old[-OLD_LAST:]) / OLD_LAST + OLD_MARGIN
    out = {}
    for arm in (lt.Arm.SHUFFLED, lt.Arm.RANDOM):
        rows = []
        for noise in range(streams):
            runs = {s: lt.run_arm(model_dir, arm, s, TEST_STEPS, noise=noise) for s in TEST_SEEDS}
            j = lt.judge(runs, frozen_test, TEST_LAST)
            old = lt.run_arm(model_dir, arm, 0, OLD_STEPS, noise=noise)
            late, early = sum(old[-OLD_LAST:]) / OLD_LAST, sum(old[:OLD_LAST]) / OLD_LAST
            old_pass = late > need and late > early
            rows.append({"noise": noise, "new_rule": _judgement_dict(j), "pooled_only_pass": j.pooled.above_zero(),
                         "old_rule_late": late, "old_rule_needed": need, "old_rule_pass": old_pass})
            log(f"{arm} stream {noise}: new rule {j}; old rule late {late:.3f} vs needed {need:.3f}: "
                f"{'PASS' if old_pass else 'fail'}")
        out[str(arm)] = {"streams": rows, "new_rule_passes": sum(r["new_rule"]["learned"] for r in rows),
                         "pooled_only_passes": sum(r["pooled_only_pass"] for r in rows),
                         "old_rule_passes": sum(r["old_rule_pass"] for r in rows)}
    return out


def plot_learner(runs: dict, judged: dict, last: int, path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, (ax, fx) = plt.subplots(1, 2, figsize=(12.5, 5.2), dpi=120, gridspec_kw={"width_ratios": [1.35, 1]})
    for arm in (lt.Arm.FROZEN, lt.Arm.RANDOM, lt.Arm.SHUFFLED, lt.Arm.TRAINED):
        ys = np.array([runs[arm][s] for s in sorted(runs[arm])])
        xs = np.arange(1, ys.shape[1] + 1)
        ax.fill_between(xs, ys.min(0), ys.max(0), color=COLORS[arm], alpha=0.15, linewidth=0)
        ax.plot(xs, ys.mean(0), "-" if arm is not lt.Arm.RANDOM else "--", color=COLORS[arm], linewidth=2,
                label=LABELS[arm])
    n = len(runs[lt.Arm.TRAINED])
    steps = len(next(iter(runs[lt.Arm.TRAINED].values())))
    ax.axvspan(steps - last + 0.5, steps + 0.5, color="k", alpha=0.05)
    ax.text(steps - last + 0.7, 0.02, f"judged\n(last {last})", fontsize=7, va="bottom")
    ax.set_xlabel("step (one group of 8 answers of 8 tokens, one CISPO step)")
    ax.set_ylabel("true mean reward of the step's group")
    ax.set_title(f"reward per step: mean of {n} seeds, band = min-max over seeds", fontsize=9)
    ax.set_ylim(0.0, 1.05)
    ax.set_xlim(1, steps)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=8, frameon=False)
    ax.grid(alpha=0.3)

    arms = (lt.Arm.TRAINED, lt.Arm.SHUFFLED, lt.Arm.RANDOM)
    seeds = sorted(runs[lt.Arm.TRAINED])
    rows = [*seeds, None]  # None: pooled
    for k, s in enumerate(rows):
        for a_i, arm in enumerate(arms):
            e = judged[arm].pooled if s is None else judged[arm].per_seed[s]
            fx.errorbar(e.delta, k + (a_i - 1) * 0.22, xerr=[[e.delta - e.ci95[0]], [e.ci95[1] - e.delta]],
                        fmt="o" if s is not None else "D", color=COLORS[arm], markersize=4, capsize=2,
                        label=LABELS[arm] if k == 0 else None)
    fx.axvline(0.0, color="k", linewidth=0.8)
    fx.set_yticks(range(len(rows)), [f"seed {s}" if s is not None else "pooled" for s in rows])
    fx.invert_yaxis()
    fx.set_xlabel(f"arm - frozen, last {last} steps: mean and 95% paired-bootstrap interval")
    verdict = ", ".join(f"{a} {'yes' if judged[a].learned else 'no'}" for a in arms)
    fx.set_title(f"effect against the frozen policy; learned: {verdict}", fontsize=9)
    fx.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=8, frameon=False)
    fx.grid(alpha=0.3, axis="x")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    _write_atomically(path, lambda p: fig.savefig(p, bbox_inches="tight"))
    plt.close(fig)
    return path


def replot(data: Path, plot_path: Path | None) -> Path:
    """The plot again from a stored JSON of `learner` (the judgement recomputed: the bootstrap is seeded)."""
    d = json.loads(Path(data).read_text())
    runs = {lt.Arm(a): {int(s): r for s, r in v.items()} for a, v in d["rewards"].items()}
    judged = {arm: lt.judge(runs[arm], runs[lt.Arm.FROZEN], d["last"]) for arm in runs if arm.trains()}
    path = plot_path or REPO / "docs" / "img" / f"rl_learning-{d['date']}.png"
    return plot_learner(runs, judged, d["last"], path, _title(d["seeds"], d["steps"], d["date"]))


def _title(seeds, steps: int, date: str) -> str:
    return f"tests/rl/learning_toy.py: tiny model, lr {lt.LR:g}, {len(seeds)} seeds x {steps} steps ({date}, CPU)"


def learner_main(args) -> dict:
    import torch

    if args.replot:
        print(f"plot: {replot(args.replot, args.plot)}")
        return {}

    from tiny import save_tiny  # tests/rl/tiny.py

    torch.set_num_threads(1)  # see tests/rl/conftest.py: the tiny model gains nothing from a second thread
    seeds = tuple(int(s) for s in args.seeds.split(","))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        save_tiny(Path(tmp) / "tiny")
        sharp = lt.sharpen(Path(tmp) / "tiny", Path(tmp) / "sharp")
        runs, times = {}, {}
        for arm in lt.Arm:
            t = time.perf_counter()
            runs[arm] = {s: lt.run_arm(sharp, arm, s, args.steps) for s in seeds}
            times[str(arm)] = time.perf_counter() - t
            print(f"{arm} ({times[str(arm)]:.1f} s): " + "; ".join(
                f"seed {s} {' '.join(f'{x:.2f}' for x in r)}" for s, r in runs[arm].items()), flush=True)
        judged = {arm: lt.judge(runs[arm], runs[lt.Arm.FROZEN], args.last) for arm in lt.Arm if arm.trains()}
        for arm, j in judged.items():
            print(f"{arm} - frozen: {j}", flush=True)
        fp = {}
        if args.streams:
            frozen_test = {s: lt.run_arm(sharp, lt.Arm.FROZEN, s, TEST_STEPS) for s in TEST_SEEDS}
            fp = false_positives(sharp, args.streams, frozen_test)
    summary = {"date": TODAY, "seeds": list(seeds), "steps": args.steps, "last": args.last, "lr": lt.LR,
               "group": lt.GROUP, "length": lt.LENGTH,
               "rewards": {str(a): {str(s): r for s, r in v.items()} for a, v in runs.items()},
               "judged": {str(a): _judgement_dict(j) for a, j in judged.items()},
               "false_positives": {"test_seeds": list(TEST_SEEDS), "test_steps": TEST_STEPS, "test_last": TEST_LAST,
                                   "old_rule": {"seed": 0, "steps": OLD_STEPS, "last": OLD_LAST,
                                                "margin": OLD_MARGIN}, **fp},
               "times_s": {**times, "total": time.perf_counter() - t0}}
    out = args.out or REPO / "docs" / "data" / f"rl_learning-learner-{TODAY}.json"
    _write_atomically(out, lambda p: p.write_text(json.dumps(summary, indent=1)))
    title = _title(seeds, args.steps, TODAY)
    plot_path = args.plot or REPO / "docs" / "img" / f"rl_learning-{TODAY}.png"
    plot_learner(runs, judged, args.last, plot_path, title)
    for arm, f in fp.items():
        print(f"{arm} over {args.streams} noise streams: new rule passed {f['new_rule_passes']}, pooled interval "
              f"alone {f['pooled_only_passes']}, old rule {f['old_rule_passes']}")
    print(f"data: {out}\nplot: {plot_path}")
    return summary


# -- job -------------------------------------------------------------------------------------------
def judge_job(rewards: dict[str, list[float]]) -> tuple[lt.Judgement, int]:
    """The job demo's two arms by the learner test's rule, over the last third of the steps (one seed:
    pooled and per seed are the same pairs)."""
    import toy

    last = max(2, len(rewards[toy.TRAINED]) // 3)
    return lt.judge({0: rewards[toy.TRAINED]}, {0: rewards[toy.CONTROL]}, last), last


def moving_mean(xs: list[float], k: int) -> list[float]:
    return [sum(xs[max(0, i - k + 1):i + 1]) / len(xs[max(0, i - k + 1):i + 1]) for i in range(len(xs))]


def plot_job(rewards: dict[str, list[float]], path: Path, title: str, window: int = 6) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import toy

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
    _write_atomically(path, fig.savefig)
    plt.close(fig)
    return path


def job_main(args) -> dict:
    import toy

    if args.rejudge:
        rewards = json.loads(Path(args.rejudge).read_text())["rewards"]
        j, last = judge_job(rewards)
        print(f"{args.rejudge}: trained - control over the last {last} steps: {j}")
        return {"judged": _judgement_dict(j), "last": last}
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
    j, last = judge_job(rewards)
    summary = {"steps": args.steps, "rewards": rewards, "times_s": times, "last": last, "judged": _judgement_dict(j),
               **{f"{arm}_last": sum(r[-last:]) / last for arm, r in rewards.items()},
               "overrides": args.set, "adapter": str(prepared.adapter)}
    _write_atomically(root / "rl_learning.json", lambda p: p.write_text(json.dumps(summary, indent=1)))
    title = (f"jobs.rl on the toy curriculum (silu-v1, relu-v1; tiny CPU model after jobs.sft), real CPU verifier\n"
             f"trained - control, last {last} steps: {j.pooled}")
    plot_path = args.plot or REPO / "docs" / "img" / f"rl_learning_job-{TODAY}.png"
    plot_job(rewards, plot_path, title)
    print(json.dumps({k: v for k, v in summary.items() if k != "rewards"}, indent=1))
    print(f"plot: {plot_path}")
    return summary


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    le = sub.add_parser("learner", help="the learner-level experiment over seeds, with its controls")
    le.add_argument("--seeds", default="0,1,2,3,4,5,6,7")
    le.add_argument("--steps", type=int, default=TEST_STEPS)
    le.add_argument("--last", type=int, default=TEST_LAST)
    le.add_argument("--streams", type=int, default=10, help="noise streams of the false-positive check (0: none)")
    le.add_argument("--out", type=Path)
    le.add_argument("--plot", type=Path)
    le.add_argument("--replot", type=Path, help="only redraw the plot from a stored JSON of this command")
    jo = sub.add_parser("job", help="the RL job's demonstration (jobs.rl, vLLM CPU, the farm)")
    jo.add_argument("--steps", type=int, default=24)
    jo.add_argument("--root", type=Path, default=REPO / "out" / "rl_learning")
    jo.add_argument("--reuse", action="store_true", help="reuse ROOT's base model and SFT adapter")
    jo.add_argument("--plot", type=Path)
    jo.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra jobs.rl override")
    jo.add_argument("--rejudge", type=Path, help="judge an earlier run's JSON (its rewards) and stop")
    args = ap.parse_args(argv)
    return learner_main(args) if args.what == "learner" else job_main(args)


if __name__ == "__main__":
    main()
