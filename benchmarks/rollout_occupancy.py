"""Requests in flight over one RL step's rollout: the real episode driver and continuous batcher over
an engine whose iterations are a clock, on the CPU in seconds.

    python -m jobs.tiny_model /tmp/tiny                      # the tokenizer and chat template
    python benchmarks/rollout_occupancy.py --model /tmp/tiny --scenario noise
    python benchmarks/rollout_occupancy.py --model /tmp/tiny --scenario submit --verify-iterations 300 --workers 1

What runs: `RolloutDriver.run_groups` (one group of `--group` repair episodes, as
jobs/configs/rl_h200.toml draws a step: the mode is drawn per group, so a step of one task is all
single-turn or all repair) -> `ContinuousBatcher` (its `trace`: per iteration, the requests decoded
and those waiting) -> a clock engine: a request needs as many iterations as it has tokens
(`--max-tokens` per turn, capped by the room left under max_model_len as the driver caps it: the
first prompt + `--room`; both a tenth of the 7B run's), one
iteration takes `--iteration-ms`. Scenarios:
- `noise`: the random-weight model of benchmarks/rl_h200.py without --scripted: every turn is
  max_tokens of text with no tool call, so every episode fills its context and ends at the context
  limit; no verification.
- `submit`: every turn submits a kernel (`submit_kernel`) after a length drawn per turn in
  [`--min-share`, 1] x max_tokens; the farm answers each submission after `--verify-iterations`
  iterations' worth of time, `--workers` at a time (one colocated verifier worker: one), with a
  failed verdict, so episodes repair until `max_turns` or the context.
Prints the step's iterations, the mean requests in flight, a timeline (the step cut in 20 slices:
mean in flight per slice) and, for scale, the step at the 7B shape: iterations x `--iteration-ms-7b`
(9.3 ms: 110,656 tokens over 8 episodes in 128.4 s on an H100, docs/benchmarks.md 2026-12-07), and
the critical path (the longest episode's own iterations plus its waits on the farm): a step cannot
be shorter without changing what is generated. Does not run vLLM or a verifier.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kgym.contract import CaseResult, Gate, Mode, Verdict  # noqa: E402
from kgym.episodes.env import EpisodeConfig  # noqa: E402
from kgym.rollout.adapters import AdapterRegistry  # noqa: E402
from kgym.rollout.context_budget import ContextBudget  # noqa: E402
from kgym.rollout.continuous import ContinuousBatcher  # noqa: E402
from kgym.rollout.driver import RolloutDriver  # noqa: E402
from kgym.rollout.engine import Completion, FinishReason  # noqa: E402
from kgym.rollout.sampling import RL_SAMPLING  # noqa: E402
from kgym.tasks import make  # noqa: E402

KERNEL = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"


class ClockEngine:
    """A request takes `tokens` iterations; an iteration takes `iteration_s`. Text by scenario."""

    def __init__(self, tokenizer, max_model_len: int, iteration_s: float, scenario: str, min_share: float,
                 seed: int):
        self.tokenizer, self.max_model_len, self.iteration_s = tokenizer, max_model_len, iteration_s
        self.scenario, self.min_share = scenario, min_share
        self.rng = random.Random(seed)
        self.live: dict[str, list] = {}
        self.n = 0
        self.iterations = 0
        self.filler = tokenizer.encode(" x", add_special_tokens=False)[0]

    def add(self, prompt, sampling, adapter=None, seed=None) -> str:
        key = f"k{self.n}"
        self.n += 1
        if self.scenario == "noise":
            text, tokens = "noise " * 8, sampling.max_tokens
        else:
            call = json.dumps({"name": "submit_kernel", "arguments": {"code": KERNEL}})
            text = f"<tool_call>\n{call}\n</tool_call>"
            tokens = max(1, int(sampling.max_tokens * self.rng.uniform(self.min_share, 1.0)))
        ids = list(self.tokenizer.encode(text, add_special_tokens=False))[:tokens]
        ids += [self.filler] * (tokens - len(ids))
        self.live[key] = [tokens, tuple(ids), text, adapter]
        return key

    @property
    def streaming(self) -> int:
        return len(self.live)

    def step(self):
        time.sleep(self.iteration_s)
        self.iterations += 1
        done = []
        for key, v in list(self.live.items()):
            v[0] -= 1
            if v[0] == 0:
                finish = FinishReason.LENGTH if self.scenario == "noise" else FinishReason.STOP
                done.append((key, Completion(v[1], (-1.0,) * len(v[1]), v[2], finish, 0, None)))
                del self.live[key]
        return done

    def abort_streamed(self):
        self.live.clear()


class SlowFarm:
    """Every submission fails correctness after `seconds`, `workers` verifications at a time."""

    def __init__(self, seconds: float, workers: int):
        self.seconds, self.sem, self.calls, self.waited = seconds, asyncio.Semaphore(workers), 0, 0.0

    async def evaluate(self, request):
        self.calls += 1
        t0 = time.perf_counter()
        async with self.sem:
            self.waited += time.perf_counter() - t0
            await asyncio.sleep(self.seconds)
        return Verdict(passed=False, gate=Gate.CORRECTNESS, reason="case b differs",
                       cases=[CaseResult("a", True), CaseResult("b", False)], launches=1)


def run(args) -> dict:
    from transformers import AutoTokenizer

    from kgym.rollout.turn_prompts import ChatPrompter
    from kgym.tasks.prompts import TOOLS, repair_messages

    tok = AutoTokenizer.from_pretrained(args.model)
    task = make("relu-v1", seed=1, size="tiny")
    first = len(ChatPrompter(tok, TOOLS).first(repair_messages(task, args.max_turns)).ids)
    args.max_model_len = first + args.room
    it_s = args.iteration_ms / 1000
    args.verify_iterations = round(args.verify_s_7b / (args.iteration_ms_7b / 1000) / args.scale)
    engine = ClockEngine(tok, args.max_model_len, it_s, args.scenario, args.min_share, args.seed)
    trace: list[tuple[float, int, int]] = []
    batcher = ContinuousBatcher(engine, trace=trace, idle_poll_s=0.01)
    farm = SlowFarm(args.verify_iterations * it_s, args.workers)
    episode = EpisodeConfig(group_size=args.group, max_turns=args.max_turns, max_submissions=args.max_turns)
    driver = RolloutDriver(batcher, farm, tok, AdapterRegistry(),
                           sampling=RL_SAMPLING.replace(group_size=args.group, max_tokens=args.max_tokens),
                           episode=episode, context=ContextBudget(args.max_model_len, args.min_generation_tokens))
    t0 = time.perf_counter()
    (group,) = asyncio.run(driver.run_groups([task], modes=[Mode.REPAIR]))
    wall = time.perf_counter() - t0
    batcher.close()
    busy = [r for _, r, _ in trace]
    iterations = len(busy)
    # the rollout's length in iterations (waits on the farm included): wall time over an iteration's
    step_s = batcher.stats.seconds / iterations if iterations else it_s
    rollout_iterations = wall / step_s
    # the critical path of each episode: its turns' iterations plus its verifications' time (in iterations)
    paths = []
    for ep in group.episodes:
        gen = sum(t.completion_tokens for t in ep.turns)
        subs = ep.result.submissions if ep.result is not None else 0
        paths.append(gen + subs * args.verify_iterations)
    slices = []
    if trace:
        end = trace[-1][0] + it_s
        for k in range(args.slices):
            lo, hi = end * k / args.slices, end * (k + 1) / args.slices
            inside = [r for t, r, _ in trace if lo <= t < hi]
            slices.append(round(sum(inside) / len(inside), 2) if inside else 0.0)
    per_it_7b = args.iteration_ms_7b / 1000
    return {
        "scenario": args.scenario, "group": args.group, "max_tokens": args.max_tokens,
        "first_prompt": first, "max_model_len": args.max_model_len, "verify_iterations": args.verify_iterations,
        "workers": args.workers,
        "episodes_errors": sum(e.error is not None for e in group.episodes),
        "turns": [len(e.turns) for e in group.episodes],
        "end_reasons": sorted({str(e.result.end_reason) for e in group.episodes if e.result is not None}),
        "tokens": sum(t.completion_tokens for e in group.episodes for t in e.turns),
        "iterations": iterations, "rollout_iterations": round(rollout_iterations), "wall_s": round(wall, 2),
        "mean_in_flight": round(sum(busy) / iterations, 2) if iterations else 0.0,
        "max_in_flight": max(busy, default=0),
        "submissions": farm.calls, "farm_queue_wait_iterations": round(farm.waited / it_s, 1),
        "critical_path_iterations": max(paths, default=0),
        "timeline_mean_in_flight": slices,
        # the rollout and its critical path at the 7B shape: x scale iterations of 9.3 ms
        "at_7b_s": {"rollout": round(args.scale * rollout_iterations * per_it_7b, 1),
                    "critical_path": round(args.scale * max(paths, default=0) * per_it_7b, 1)},
        "admissions": batcher.stats.calls, "mean_admission": round(batcher.stats.requests / max(1, batcher.stats.calls),
                                                                   2),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="rollout_occupancy.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="a model directory with a tokenizer and chat template")
    p.add_argument("--scenario", choices=("noise", "submit"), default="noise")
    p.add_argument("--group", type=int, default=8)
    p.add_argument("--max-tokens", type=int, default=614, help="a turn's max_tokens (the 7B run's 6,144 / 10)")
    p.add_argument("--room", type=int, default=1390, help="max_model_len minus the first prompt: the 7B run "
                   "generated 13,832 tokens an episode (110,656 / 8), so ~13,900 / 10")
    p.add_argument("--min-generation-tokens", type=int, default=102)
    p.add_argument("--max-turns", type=int, default=6)
    p.add_argument("--min-share", type=float, default=0.3, help="submit: shortest turn as a share of max_tokens")
    p.add_argument("--verify-s-7b", type=float, default=0.0, help="submit: a verification's seconds at the 7B "
                   "shape (3.3: the median verify beside the 7B job on an H100, 2026-12-07)")
    p.add_argument("--scale", type=float, default=10.0, help="the 7B run's tokens (and verification time in "
                   "iterations) over this run's")
    p.add_argument("--workers", type=int, default=1, help="submit: verifications at a time")
    p.add_argument("--iteration-ms", type=float, default=2.0)
    p.add_argument("--iteration-ms-7b", type=float, default=9.3)
    p.add_argument("--slices", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = p.parse_args(argv)
    threading.current_thread().name = "rollout_occupancy"
    out = run(args)
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
