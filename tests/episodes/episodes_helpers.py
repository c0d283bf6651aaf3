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
