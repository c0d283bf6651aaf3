"""Scripted-policy helpers for the episode tests: tool calls, assistant messages, fenced answers."""

from __future__ import annotations

import json


def call(name: str, call_id: str = "", **arguments) -> dict:
    """One tool call in OpenAI's form (arguments as JSON text)."""
    return {"id": call_id or f"c-{name}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def says(*calls: dict, content: str = "") -> dict:
    """An assistant message carrying `calls`."""
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def fenced(code: str, lang: str = "python") -> str:
    return f"Here is my answer.\n\n```{lang}\n{code.rstrip()}\n```\n"


def run(coro):
    """Run one coroutine of the async episode API to completion (tests are synchronous)."""
    import asyncio

    return asyncio.run(coro)


def verdict_of(evaluator, task, code):
    """The evaluator's verdict on `code` for `task` (from its cache when already verified)."""
    from kgym.contract import EvalRequest

    return run(evaluator.evaluate(EvalRequest.for_task(task, code)))


def passing_verdict(speedup: float = 2.0):
    """A verdict that passes every case, stably timed, `speedup` times faster than both baselines."""
    from kgym.contract import CaseResult, Timing, Verdict

    return Verdict(passed=True, cases=[CaseResult(n, True, 0.0, 0.0, True) for n in ("nominal", "x3", "neg")],
                   timings={"candidate": Timing(1.0, 0.01, 5, True, "host")}, speedup_eager=speedup,
                   speedup_compile=speedup / 2)


class SleepyEvaluator:
    """An Evaluator without a verifier: each evaluate awaits a sleep and counts how many are in flight."""

    def __init__(self, verdict=None, delay: float = 0.01):
        self.verdict = verdict or passing_verdict()
        self.delay = delay
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests = []

    async def evaluate(self, request):
        import asyncio

        self.requests.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            return self.verdict
        finally:
            self.in_flight -= 1
