"""What `farm_throughput.py` asks the farm to verify, and the verdict each answer should get.

- `solutions`: the reference solutions of four short tasks (relu, softmax, row_sum, rmsnorm), each
  made unique by a trailing comment: every candidate is a full verification and passes every gate.
- `realistic`: the first task of every family at the size asked for. Each round holds every task's
  reference solution, every task's known-wrong answer and CRASHES_PER_ROUND answers that exhaust
  memory (the demo's `huge_allocation`, a crash verdict), shuffled with a fixed seed so rounds differ
  but runs repeat. Wrong answers fail at the correctness gate and skip timing; crashes end their
  process, so each takes a fresh spare.

Expectations are `jobs.demo_report.Expectation`s, checked by `jobs.demo_report.unmet`, as in `kgym demo`.
"""

from __future__ import annotations

import random

from jobs.demo import ANSWERS, EXPLOITS
from jobs.demo_report import Expectation

MIXES = ("solutions", "realistic")
SOLUTION_TASKS = ("relu-v1", "softmax-v1", "row_sum-v1", "rmsnorm-v1")
CRASH = "huge_allocation"
CRASHES_PER_ROUND = 2


def mix_tasks(mix: str, size: str) -> list:
    """The tasks a mix draws on (the warm-up verifies each one's solution once per worker)."""
    from kgym.tasks import make, operations

    if mix == "solutions":
        return [make(t, 0, size=size) for t in SOLUTION_TASKS]
    if mix == "realistic":
        first: dict[str, str] = {}
        for task_id, op in operations().items():
            first.setdefault(op.family, task_id)
        return [make(t, 0, size=size) for t in first.values()]
    raise ValueError(f"mix {mix!r}: use one of {', '.join(MIXES)}")


def mix_requests(mix: str, tasks: list, n: int, tag: str, fresh_seed: int | None = None
                 ) -> tuple[list, dict[str, Expectation]]:
    """`n` distinct requests of the mix (each source carries `tag` and its index) and what each should get.
    With `fresh_seed`, request i is of its task drawn again with seed fresh_seed + i: new shapes each
    time, so no baseline of it is cached (an RL run's first sight of every task)."""
    from kgym.tasks import make
    from ray_cluster import EvalRequest

    plan = []  # (task, kind)
    if mix == "solutions":
        plan = [(tasks[i % len(tasks)], "solution") for i in range(n)]
    else:
        crash_task = next((t for t in tasks if t.task_id == "relu-v1"), tasks[0])
        rounds = 0
        while len(plan) < n:
            one = [(t, "solution") for t in tasks] + [(t, "wrong") for t in tasks if t.wrong]
            one += [(crash_task, "exploit")] * CRASHES_PER_ROUND
            random.Random(rounds).shuffle(one)
            plan += one
            rounds += 1
        plan = plan[:n]
    crash_source = (ANSWERS / f"{CRASH}.py").read_text()
    requests, expect = [], {}
    for i, (task, kind) in enumerate(plan):
        if fresh_seed is not None:
            task = make(task.task_id, fresh_seed + i, size=task.spec.size, stage=task.spec.stage)
        source = {"solution": task.solution, "wrong": task.wrong, "exploit": crash_source}[kind]
        req = EvalRequest.for_task(task, source + f"\n# {tag} {i}\n", label=f"{tag}:{kind}")
        requests.append(req)
        expect[req.evaluation_id] = (Expectation("exploit", CRASH, EXPLOITS[CRASH]) if kind == "exploit"
                                     else Expectation(kind, task.task_id))
    return requests, expect
