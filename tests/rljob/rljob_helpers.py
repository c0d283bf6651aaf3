"""Shared pieces of the RL job tests (not a test module): the scripted answers that let a random tiny
model's turns reach the verifier (vLLM structured outputs pick one of them per turn), and reading a
run's RL tables back."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def tool_call(name: str, **arguments) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def scripted_answers() -> list[str]:
    """relu's reference solution and known-wrong answer, each as a single-turn answer (a python fence)
    and as a repair turn (a submit_kernel call), and an answer without code. relu's sources do not
    depend on the task's seed, so they answer every tiny relu task."""
    from kgym.tasks import make

    t = make("relu-v1", 1, size="tiny")
    fence = "```python\n{}\n```"
    return [fence.format(t.solution.rstrip()), fence.format(t.wrong.rstrip()),
            tool_call("submit_kernel", code=t.solution), tool_call("submit_kernel", code=t.wrong),
            "I cannot write this kernel."]


def write_choice_file(path: Path) -> Path:
    path.write_text(json.dumps(scripted_answers()))
    return path
