"""Messages in the form Hugging Face chat templates read: every tool call's `arguments` a mapping.

kgym keeps tool calls in OpenAI's form, `arguments` as JSON text (`toolcalls.parse_tool_calls`, the
env's transcript, the records). Chat templates are written for transformers' form, where
`arguments` is a dict: the Qwen3-family templates TRL ships (`qwen3_8.jinja`, `qwen3_6.jinja`)
iterate `arguments|items` and raise on text, and Llama 3.1's (`llama3_1.jinja`) renders
`arguments|tojson`, which turns text into one quoted string instead of the object. So the prompter
hands the template `template_messages(messages)`, a copy in which each call's arguments are:
- the object, when they are JSON text of an object (or already a mapping);
- `{"raw": text}` otherwise (not JSON, or JSON that is not an object: a malformed call the env
  answered with an error), so every template still renders the call, and what the model wrote
  stays visible where a prompt is re-rendered in full (`turn_prompts.TurnPrompt.rebuilt`).
The given messages are not changed. Does not render, tokenize, or parse model text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def template_arguments(arguments: Any) -> dict[str, Any]:
    """A tool call's arguments as the mapping a chat template iterates (rules in the docstring)."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if arguments is None:
        return {}
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    if not text.strip():
        return {}
    try:
        value = json.loads(text, strict=False)
    except (json.JSONDecodeError, RecursionError):  # RecursionError: nested too deeply (toolcalls.py)
        return {"raw": text}
    return value if isinstance(value, dict) else {"raw": text}


def _call(call: Any) -> Any:
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
        return call
    fn = call["function"]
    return {**call, "function": {**fn, "arguments": template_arguments(fn.get("arguments"))}}


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of `messages` with every tool call's arguments a mapping."""
    out = []
    for m in messages:
        calls = m.get("tool_calls")
        out.append({**m, "tool_calls": [_call(c) for c in calls]} if isinstance(calls, list) else dict(m))
    return out
