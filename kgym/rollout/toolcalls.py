"""Tool calls out of a model's text: the Qwen/Hermes `<tool_call>{"name", "arguments"}</tool_call>`
form into the OpenAI-form assistant message that `kgym.episodes` takes.

    from kgym.rollout.toolcalls import parse_tool_calls
    parsed = parse_tool_calls(text, id_prefix="call_3")
    parsed.message     # {"role": "assistant", "content": text outside the calls, "tool_calls": [...]}
    parsed.problems    # one line per block that was not clean JSON (also visible to the env, see below)

The rules:
- A call is the text after a `<tool_call>` tag. Its JSON object is read with a JSON decoder from the
  first `{` (or `[` for a list of calls), so braces, quotes and even the closing tag inside a string
  argument (kernels are full of all three) never end it early; the `</tool_call>` after the object
  is then consumed. Strings may hold raw newlines and tabs (`strict=False`): models write code that
  way, and rejecting it would punish a formatting slip as a wrong kernel.
- JSON nested too deeply for Python's decoder (`[[[[...` a thousand levels: it raises RecursionError,
  not a decode error) is malformed like any other bad JSON. Why: the exception escaped the parser, the
  env and the chat-form conversion, ended the whole rollout's gather and so the RL step, from a few
  hundred tokens of the policy's own text (red team, 2026-12-07).
- `arguments` may be an object or a JSON string of one (both reach the env as a JSON string, the
  OpenAI form; chat templates get them as a mapping, `chat_form.py`); `parameters` is read when
  `arguments` is absent; no arguments is `{}`.
- A call that is not valid JSON, has no name, or is cut off (an open tag at the end of the text,
  the generation hit its token limit) is NOT dropped: it becomes a tool call the env refuses with
  an `error: ...` tool message (an empty name, or the raw text as `arguments`), so the model is told
  that its call was malformed rather than that it made none. `problems` says the same for logs.
- A complete object after an open tag with no closing tag (the model stopped right after the JSON)
  is accepted as a call: nothing is missing but the tag, and `unclosed` counts it.
- Text outside the calls is the message's content, stripped; with no call there are no
  `tool_calls` at all (the env then tells the model it made no call).
Does not check tool names or argument names (`kgym.episodes.tools.parse_tool_call` does, against
the tool schemas), does not render calls back into text (the chat template does), and imports
neither torch nor vLLM.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

OPEN_TAG = "<tool_call>"
CLOSE_TAG = "</tool_call>"
_DECODER = json.JSONDecoder(strict=False)
_NAME = re.compile(r'"name"\s*:\s*"([^"\\]{1,80})"')


@dataclass(frozen=True)
class ParsedMessage:
    """An assistant message with its tool calls in OpenAI form, and what was wrong with any of them."""

    content: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one per malformed block, for logs
    unclosed: int = 0  # calls accepted without their closing tag

    @property
    def message(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [dict(c, function=dict(c["function"])) for c in self.tool_calls]
        return msg


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _from_object(obj: Any, call_id: str) -> tuple[dict[str, Any], str | None]:
    """One OpenAI-form call from a decoded object, and the problem with it (None when clean)."""
    if not isinstance(obj, dict):
        return _call(call_id, "", json.dumps(obj)), f"{call_id}: expected a JSON object, got {type(obj).__name__}"
    name = obj.get("name")
    args = obj.get("arguments", obj.get("parameters", {}))
    args_text = args if isinstance(args, str) else json.dumps(args)
    if not isinstance(name, str) or not name:
        return _call(call_id, "", args_text), f"{call_id}: the call has no name"
    return _call(call_id, name, args_text), None


def _decode(text: str, at: int) -> tuple[Any, int]:
    """`raw_decode` with JSON nested past the interpreter's recursion limit read as a decode error."""
    try:
        return _DECODER.raw_decode(text, at)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, at) from None


def _malformed(raw: str, call_id: str, why: str) -> tuple[dict[str, Any], str]:
    # Keep a name found by pattern, so the env's message names the tool and says the JSON was bad.
    m = _NAME.search(raw)
    return _call(call_id, m.group(1) if m else "", raw.strip()), f"{call_id}: {why}"


def parse_tool_calls(text: str | None, id_prefix: str = "call") -> ParsedMessage:
    """The calls of `text` by the rules in this module's docstring; ids are `{id_prefix}_{k}`."""
    text = text or ""
    content: list[str] = []
    calls: list[dict[str, Any]] = []
    problems: list[str] = []
    unclosed = 0
    pos = 0
    while True:
        start = text.find(OPEN_TAG, pos)
        if start < 0:
            content.append(text[pos:])
            break
        content.append(text[pos:start])
        body = start + len(OPEN_TAG)
        close = text.find(CLOSE_TAG, body)
        lead = len(text[body:]) - len(text[body:].lstrip())
        obj_at = body + lead
        call_id = f"{id_prefix}_{len(calls)}"
        try:
            obj, end = _decode(text, obj_at)
        except json.JSONDecodeError as e:
            # Not JSON from the tag on: the block runs to the closing tag (or the end, when cut off).
            stop = close if close >= 0 else len(text)
            why = (f"not valid JSON ({e.msg} at offset {e.pos - obj_at})" if close >= 0
                   else "cut off: no closing </tool_call> and the JSON is incomplete")
            call, problem = _malformed(text[body:stop], call_id, why)
            calls.append(call)
            problems.append(problem)
            pos = stop + len(CLOSE_TAG) if close >= 0 else len(text)
            continue
        rest = text[end:]
        tail = rest.lstrip()
        if tail.startswith(CLOSE_TAG):
            pos = end + (len(rest) - len(tail)) + len(CLOSE_TAG)
        elif close >= 0:
            # Something between the object and the closing tag: the block is not one JSON value.
            call, problem = _malformed(text[body:close], call_id, "text after the JSON object inside the tag")
            calls.append(call)
            problems.append(problem)
            pos = close + len(CLOSE_TAG)
            continue
        else:
            unclosed += 1
            pos = end
        for k, item in enumerate(obj if isinstance(obj, list) else [obj]):
            item_id = f"{id_prefix}_{len(calls)}" if k else call_id
            try:
                call, problem = _from_object(item, item_id)
            except RecursionError:  # decoded, but too deep to encode again from here: malformed all the same
                call, problem = _malformed(text[body:pos], item_id, "not valid JSON (nested too deeply)")
            calls.append(call)
            if problem:
                problems.append(problem)
    return ParsedMessage("".join(content).strip(), calls, problems, unclosed)
