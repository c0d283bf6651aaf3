"""The Hermes/Qwen tool-call parser (torch-free, no vLLM): every form a model writes, malformed
ones included, and what the env then says about them."""

from __future__ import annotations

import asyncio
import json

from kgym.episodes.tools import parse_tool_call
from kgym.rollout.toolcalls import parse_tool_calls

KERNEL = '''import triton
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    d = {"a": 1, 'b': "}"}  # braces and quotes: {not the end}
    s = "</tool_call>"
'''


def block(obj, close: bool = True) -> str:
    return "<tool_call>\n" + json.dumps(obj) + ("\n</tool_call>" if close else "")


def test_one_call_with_text_around():
    p = parse_tool_calls("Let me submit.\n" + block({"name": "submit_kernel", "arguments": {"code": "x = 1"}})
                         + "\nDone.", id_prefix="call_1")
    assert p.content == "Let me submit.\n\nDone."
    assert p.problems == [] and p.unclosed == 0
    (call,) = p.tool_calls
    assert call == {"id": "call_1_0", "type": "function",
                    "function": {"name": "submit_kernel", "arguments": '{"code": "x = 1"}'}}
    parsed, problem = parse_tool_call(call, default_id="unused")
    assert problem == "" and parsed.arguments == {"code": "x = 1"} and parsed.call_id == "call_1_0"


def test_no_call_gives_no_tool_calls_key():
    p = parse_tool_calls("  just text  ")
    assert p.content == "just text" and p.tool_calls == [] and "tool_calls" not in p.message
    assert parse_tool_calls(None).content == ""


def test_code_with_braces_quotes_and_the_closing_tag_inside_the_string():
    p = parse_tool_calls(block({"name": "submit_kernel", "arguments": {"code": KERNEL}}))
    (call,) = p.tool_calls
    assert p.problems == [] and p.content == ""
    assert json.loads(call["function"]["arguments"])["code"] == KERNEL


def test_raw_newlines_inside_a_json_string_are_accepted():
    text = '<tool_call>\n{"name": "submit_kernel", "arguments": {"code": "def f():\n\treturn {1: 2}\n"}}\n</tool_call>'
    (call,) = parse_tool_calls(text).tool_calls
    assert json.loads(call["function"]["arguments"])["code"] == "def f():\n\treturn {1: 2}\n"


def test_several_calls_in_order_with_distinct_ids():
    text = (block({"name": "submit_kernel", "arguments": {"code": "a"}}) + "\nthen\n"
            + block({"name": "finalize", "arguments": {"evaluation_id": "abc12345"}}))
    p = parse_tool_calls(text, id_prefix="c")
    assert [c["function"]["name"] for c in p.tool_calls] == ["submit_kernel", "finalize"]
    assert [c["id"] for c in p.tool_calls] == ["c_0", "c_1"]
    assert p.content == "then"


def test_a_list_of_calls_in_one_block():
    p = parse_tool_calls(block([{"name": "inspect_evaluation", "arguments": {"evaluation_id": "e"}},
                                {"name": "finalize", "arguments": {"evaluation_id": "e"}}]))
    assert [c["id"] for c in p.tool_calls] == ["call_0", "call_1"] and p.problems == []


def test_arguments_as_a_json_string_and_parameters_alias_and_none():
    p = parse_tool_calls(block({"name": "submit_kernel", "arguments": json.dumps({"code": "y"})})
                         + block({"name": "finalize", "parameters": {"evaluation_id": "z"}})
                         + block({"name": "finalize"}))
    args = [c["function"]["arguments"] for c in p.tool_calls]
    assert json.loads(args[0]) == {"code": "y"} and json.loads(args[1]) == {"evaluation_id": "z"} and args[2] == "{}"


def test_malformed_json_is_kept_as_a_call_the_env_refuses():
    text = '<tool_call>\n{"name": "submit_kernel", "arguments": {"code": "x" "y"}}\n</tool_call> after'
    p = parse_tool_calls(text)
    (call,) = p.tool_calls
    assert call["function"]["name"] == "submit_kernel"  # salvaged, so the env's error names the tool
    assert "not valid JSON" in p.problems[0] and p.content == "after"
    parsed, problem = parse_tool_call(call, default_id="x")
    assert parsed is None and problem.startswith("malformed arguments for submit_kernel")


def test_missing_name():
    p = parse_tool_calls(block({"arguments": {"code": "x"}}))
    (call,) = p.tool_calls
    assert "no name" in p.problems[0]
    parsed, problem = parse_tool_call(call, default_id="x")
    assert parsed is None and "no name" in problem


def test_not_an_object():
    p = parse_tool_calls("<tool_call>42</tool_call>")
    assert len(p.tool_calls) == 1 and "expected a JSON object" in p.problems[0]


def test_text_after_the_object_inside_the_tag():
    p = parse_tool_calls('<tool_call>{"name": "finalize", "arguments": {}} oops</tool_call>')
    assert len(p.tool_calls) == 1 and "text after the JSON object" in p.problems[0]


def test_unclosed_tag_with_a_complete_object_is_a_call():
    p = parse_tool_calls("ok " + block({"name": "finalize", "arguments": {"evaluation_id": "q"}}, close=False))
    assert p.unclosed == 1 and p.problems == [] and p.content == "ok"
    assert p.tool_calls[0]["function"]["name"] == "finalize"


def test_cut_off_call_is_a_malformed_call():
    text = "<tool_call>\n" + json.dumps({"name": "submit_kernel", "arguments": {"code": KERNEL}})[:40]
    p = parse_tool_calls(text)
    (call,) = p.tool_calls
    assert "cut off" in p.problems[0] and call["function"]["name"] == "submit_kernel" and p.content == ""


def test_empty_block_and_a_good_one_after_it():
    p = parse_tool_calls("<tool_call></tool_call>" + block({"name": "finalize", "arguments": {"evaluation_id": "e"}}))
    assert len(p.tool_calls) == 2 and len(p.problems) == 1
    assert p.tool_calls[1]["function"]["name"] == "finalize" and p.tool_calls[1]["id"] == "call_1"


def test_message_is_a_copy():
    p = parse_tool_calls(block({"name": "finalize", "arguments": {}}))
    m = p.message
    m["tool_calls"][0]["function"]["name"] = "changed"
    assert p.tool_calls[0]["function"]["name"] == "finalize"


def test_the_env_answers_every_parsed_call(tmp_path):
    """A malformed and a good call in one message reach the env as two calls: one error, one answer."""
    from kgym.contract import Mode
    from kgym.episodes import KernelEnv
    from kgym.tasks import make

    class NeverCalled:
        async def evaluate(self, request):  # pragma: no cover - nothing is submitted here
            raise AssertionError("no submission expected")

    async def go():
        env = KernelEnv(NeverCalled())
        await env.reset(make("relu-v1", seed=0, size="tiny"), Mode.REPAIR)
        text = ('<tool_call>{"name": "inspect_evaluation", "arguments": {"evaluation_id": }}</tool_call>'
                + block({"name": "inspect_evaluation", "arguments": {"evaluation_id": "deadbeef00"}}))
        return await env.step(parse_tool_calls(text, id_prefix="call_1").message)

    step = asyncio.run(go())
    assert [m["role"] for m in step.observation] == ["tool", "tool"]
    assert step.observation[0]["content"].startswith("error: malformed arguments for inspect_evaluation")
    assert step.observation[1]["content"].startswith("error: unknown evaluation id")
    assert step.info["errors"] == 2
