"""Where an RL step's time goes (generation / verification / learning / sync) and the ratio of the
farm's verification throughput to the engine's generation throughput: how many verifier GPUs one
rollout GPU needs so that the farm is never the bottleneck.

    python benchmarks/rl_step.py --mode job --model DIR --choices FILE [--steps 3]     # CPU: the real job
    python benchmarks/rl_step.py --mode replay --preset 1.5b --verifiers 1             # GPU: no vLLM

`--mode job` runs `python -m jobs.rl` (jobs/configs/rl_tiny.toml: vLLM's CPU build, the Triton
interpreter, the real farm and learner) for `--steps` steps and reads its steps table
(`kgym.records.rl_records`): every phase as the driver timed it.

`--mode replay` is for a GPU machine where vLLM cannot run: the episodes are scripted instead of
generated. Verification: every family's first task at `--size`, each one's reference solution and
known-wrong answer (made distinct per round by a trailing comment), `--episodes` candidates through
the real farm (`VerifierPool`, one worker per GPU given) -> verifications per second per worker.
Learning: the real `Learner` on a random-weight model of `--preset`'s shape (as
benchmarks/learner_step.py), one step on a group of `--group` samples of `--seq-len` tokens.
Sync: `Learner.save_adapter` (writing adapter v+1; loading it into vLLM is not measured here).
Generation is not measured in this mode: `--gen-tokens-per-s` (per rollout GPU) is an input, and
the printed ratio says which it used.

The arithmetic (both modes): an episode costs `tokens_per_episode` generated tokens and
`verifications_per_episode` verifications. One rollout GPU makes gen_tps / tokens_per_episode
episodes a second, i.e. that times verifications_per_episode verifications a second; one verifier
GPU clears `verify_per_s`. Verifier GPUs per rollout GPU = the first over the second. Prints one
JSON object per phase and a summary.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The study: 8 answers per step, 75% repair (up to 4 submissions) / 25% single; ~1,109-token answers on
# KernelBench, up to 6,144 per repair turn. These are the replay mode's defaults per episode.
STUDY_TOKENS_PER_EPISODE = 3000
STUDY_VERIFICATIONS_PER_EPISODE = 0.25 * 1 + 0.75 * 2.5


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def needed_verifiers(gen_tps: float, tokens_per_episode: float, verifications_per_episode: float,
                     verify_per_s: float) -> float:
    """Verifier GPUs per rollout GPU (see the module docstring)."""
    if tokens_per_episode <= 0 or verify_per_s <= 0:
        raise ValueError("need tokens_per_episode > 0 and verify_per_s > 0")
    return gen_tps / tokens_per_episode * verifications_per_episode / verify_per_s


def job_mode(args) -> dict:
    from kgym.records.rl_records import Table, load

    out = Path(args.out or tempfile.mkdtemp(prefix="kgym-rl-bench-"))
    run_id = f"bench-{int(time.time())}"
    cmd = [sys.executable, "-m", "jobs.rl", "--config", args.config, "--set", f'model="{args.model}"',
           "--set", f'records.out="{out}"', "--run-id", run_id, "--set", f"steps={args.steps}",
           "--set", "eval.every=0"]
    if args.choices:
        cmd += ["--set", f'sampling.choice_file="{args.choices}"']
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"jobs.rl failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    steps = load(out / run_id, Table.STEPS)
    rollouts = load(out / run_id, Table.ROLLOUTS)
    emit({"phase": "job", "wall_s": round(time.perf_counter() - t0, 1), "steps": len(steps)})
    for _, s in steps.iterrows():
        emit({"phase": "step", "step": int(s["step"]), **{k: round(float(s[k]), 3) for k in
              ("generation_s", "verification_s", "verify_busy_s", "learning_s", "sync_s", "checkpoint_s",
               "step_s")}, "verifications": int(s["verifications"]), "generated_tokens": int(s["generated_tokens"])})
    timed = steps.iloc[1:] if len(steps) > 1 else steps  # step 1 pays first-call costs
    gen_s, tok = timed["generation_s"].sum(), timed["generated_tokens"].sum()
    busy, nver = timed["verify_busy_s"].sum(), timed["verifications"].sum()
    episodes = len(rollouts[(rollouts["kind"] == "train") & rollouts["step"].isin(timed["step"])])
    split = {c: round(float(timed[c].median()), 3) for c in ("generation_s", "verification_s", "learning_s", "sync_s",
                                                              "checkpoint_s", "step_s")}
    gen_tps = tok / gen_s if gen_s else 0.0
    verify_per_s = nver / busy if busy else 0.0
    summary = {"phase": "summary", "mode": "job", "median_step": split, "generation_tokens_per_s": round(gen_tps, 1),
               "verify_per_s_per_worker": round(verify_per_s, 3),
               "tokens_per_episode": round(tok / max(episodes, 1), 1),
               "verifications_per_episode": round(nver / max(episodes, 1), 3)}
    if verify_per_s and episodes:
        summary["verifier_workers_per_rollout_engine"] = round(needed_verifiers(
            gen_tps, tok / episodes, nver / episodes, verify_per_s), 3)
    emit(summary)
    return summary


def replay_mode(args) -> dict:
    import ray
    import torch

    from kgym.contract import EvalRequest
    from kgym.tasks import FAMILIES, make, task_ids
    from ray_cluster import PoolConfig, RaySettings, VerifierPool, WorkerConfig, connect

    # -- verification through the real farm
    gpus = torch.cuda.is_available()
    connect(RaySettings(address="local", num_gpus=args.verifiers if gpus else 0,
                        num_cpus=max(4, os.cpu_count() or 4)))
    tasks = [make(task_ids(f)[0], 1, size=args.size) for f in FAMILIES if task_ids(f)]
    answers = [(t, src) for t in tasks for src in (t.solution, t.wrong) if src]
    cfg = PoolConfig(workers=args.verifiers, use_gpus=gpus, worker=WorkerConfig(verify={"measure_compile": False}
                                                                                 if args.no_compile else {}))
    with VerifierPool(cfg) as pool:
        warm = [EvalRequest.for_task(t, src + "\n# warm-up\n") for t, src in answers]
        t0 = time.perf_counter()
        list(pool.run(warm))
        emit({"phase": "farm_warmup", "candidates": len(warm), "s": round(time.perf_counter() - t0, 1)})
        reqs = [EvalRequest.for_task(t, src + f"\n# round {k}\n") for k in range(args.episodes // len(answers) + 1)
                for t, src in answers][:args.episodes]
        t0 = time.perf_counter()
        results = list(pool.run(reqs))
        wall = time.perf_counter() - t0
    ray.shutdown()
    verify_per_s = len(results) / wall / args.verifiers
    emit({"phase": "verification", "candidates": len(results), "wall_s": round(wall, 2),
          "per_s_per_worker": round(verify_per_s, 3),
          "passed": sum(r.verdict.passed for r in results)})

    # -- learning and the adapter write, on a random model of the preset's shape
    spec = __import__("importlib.util").util.spec_from_file_location("kgym_bench_ls", ROOT / "benchmarks" /
                                                                       "learner_step.py")
    ls = __import__("importlib.util").util.module_from_spec(spec)
    spec.loader.exec_module(ls)
    core = ls.load_learner_core()
    device = torch.device("cuda" if gpus else "cpu")
    model_dir = Path(args.model_dir or f"/tmp/kgym-bench/{args.preset}")
    model_dir.parent.mkdir(parents=True, exist_ok=True)
    emit(ls.build_random_model(args.preset, model_dir, device))

    learner = core.Learner(core.LearnerConfig(model_path=str(model_dir), quantize_4bit=gpus,
                                              compute_dtype="bfloat16" if gpus else "float32",
                                              token_budget=args.seq_len))
    vocab = ls.PRESETS[args.preset]["vocab_size"]
    times = []
    for k in range(args.learn_steps + 1):
        batch = ls.make_group(args.group, args.seq_len, args.prompt_len, vocab, seed=k)
        t0 = time.perf_counter()
        learner.step(batch)
        times.append(time.perf_counter() - t0)
    learning_s = statistics.median(times[1:]) if len(times) > 1 else times[0]
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        learner.save_adapter(d)
        sync_s = time.perf_counter() - t0
    emit({"phase": "learning", "preset": args.preset, "samples": args.group, "seq_len": args.seq_len,
          "step_s": round(learning_s, 3), "warmup_s": round(times[0], 3), "adapter_write_s": round(sync_s, 3)})

    # -- a step of the study's shape: group episodes, their verifications spread over the farm
    ver = args.group * args.verifications_per_episode
    gen_s = args.group * args.tokens_per_episode / args.gen_tokens_per_s
    verification_s = ver / (verify_per_s * args.verifiers)
    summary = {"phase": "summary", "mode": "replay", "device": torch.cuda.get_device_name() if gpus else "cpu",
               "step_split_s": {"generation (assumed)": round(gen_s, 2), "verification": round(verification_s, 2),
                                "learning": round(learning_s, 2), "sync (adapter write)": round(sync_s, 3)},
               "assumed_gen_tokens_per_s": args.gen_tokens_per_s, "tokens_per_episode": args.tokens_per_episode,
               "verifications_per_episode": args.verifications_per_episode,
               "verify_per_s_per_gpu": round(verify_per_s, 3),
               "verifier_gpus_per_rollout_gpu": round(needed_verifiers(args.gen_tokens_per_s, args.tokens_per_episode,
                                                                       args.verifications_per_episode, verify_per_s),
                                                      3)}
    emit(summary)
    return summary


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("job", "replay"), required=True)
    ap.add_argument("--model", help="job mode: the model directory")
    ap.add_argument("--choices", help="job mode: a scripted-answers JSON file (tests/rljob/rljob_helpers.py)")
    ap.add_argument("--config", default="jobs/configs/rl_tiny.toml")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--out", help="job mode: records root (default a temp dir)")
    ap.add_argument("--preset", default="1.5b", choices=("tiny", "1.5b", "7b"))
    ap.add_argument("--model-dir")
    ap.add_argument("--size", default="full", choices=("tiny", "small", "full"))
    ap.add_argument("--verifiers", type=int, default=1, help="replay: verifier workers (one per GPU)")
    ap.add_argument("--episodes", type=int, default=32, help="replay: candidates verified")
    ap.add_argument("--no-compile", action="store_true", help="replay: skip the torch.compile baseline")
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=4096)
    ap.add_argument("--prompt-len", type=int, default=1024)
    ap.add_argument("--learn-steps", type=int, default=2)
    ap.add_argument("--gen-tokens-per-s", type=float, default=2500.0,
                    help="replay: generation throughput of one rollout GPU (an input, not measured)")
    ap.add_argument("--tokens-per-episode", type=float, default=STUDY_TOKENS_PER_EPISODE)
    ap.add_argument("--verifications-per-episode", type=float, default=STUDY_VERIFICATIONS_PER_EPISODE)
    args = ap.parse_args(argv)
    if args.mode == "job":
        if not args.model:
            ap.error("--mode job needs --model")
        return job_mode(args)
    return replay_mode(args)


if __name__ == "__main__":
    main()
