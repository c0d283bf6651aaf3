"""Exploit: JSON nested past Python's recursion limit in a tool call (red team, 2026-12-07).

`json` raises RecursionError, not JSONDecodeError, on `[[[[...` a thousand levels deep. It escaped
`parse_tool_calls` (the outer object), `parse_tool_call` (arguments given as JSON text) and the
chat-form conversion, so a few hundred tokens of the policy's own text ended `run_groups`' gather:
every episode of the step lost, the RL step failed. Now it is a malformed call like any other bad
JSON: the env answers it with an error, the episode goes on and is scored. The honest edge: a kernel
whose code string holds thousands of brackets (text, not nesting) is a clean call."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from rollout_helpers import CannedEvaluator, ScriptedEngine, partial_verdict, tool_call_text

from kgym.contract import EndReason, Mode
from kgym.episodes import EpisodeConfig
from kgym.episodes.tools import parse_tool_call
from kgym.rollout.adapters import AdapterRegistry
from kgym.rollout.batcher import GenerationBatcher
from kgym.rollout.chat_form import template_arguments
from kgym.rollout.driver import RolloutDriver
from kgym.rollout.sampling import RL_SAMPLING
from kgym.rollout.toolcalls import parse_tool_calls
from kgym.tasks import make

DEEP = "[" * 5000
DEEP_OUTER = f"<tool_call>{DEEP}</tool_call>"
DEEP_ARGS = "<tool_call>" + json.dumps({"name": "submit_kernel", "arguments": DEEP}) + "</tool_call>"


def test_deep_json_is_a_malformed_call_everywhere():
    outer = parse_tool_calls(DEEP_OUTER, id_prefix="c")
    assert len(outer.tool_calls) == 1 and "nested too deeply" in outer.problems[0]
    args = parse_tool_calls(DEEP_ARGS, id_prefix="c")
    call, problem = parse_tool_call(args.tool_calls[0], "c_0")
    assert call is None and "nested too deeply" in problem
    assert template_arguments(DEEP) == {"raw": DEEP}


def test_brackets_inside_a_code_string_are_an_honest_call():
    code = "x = '" + DEEP + "'\n"
    call, problem = parse_tool_call(parse_tool_calls(tool_call_text("submit_kernel", code=code)).tool_calls[0], "c")
    assert problem == "" and call.arguments["code"] == code


def test_a_deep_json_turn_ends_nothing_but_its_own_call(tiny_tok):
    relu = make("relu-v1", seed=1, size="tiny")

    def script(prompt: str) -> str:
        ids = re.findall(r"evaluation_id: ([0-9a-f]{8,})", prompt)
        if ids:
            return tool_call_text("finalize", evaluation_id=ids[-1])
        if "nested too deeply" in prompt:
            return tool_call_text("submit_kernel", code=relu.wrong)
        return DEEP_OUTER + "\n" + DEEP_ARGS

    engine = ScriptedEngine(tiny_tok, script)
    driver = RolloutDriver(GenerationBatcher(engine), CannedEvaluator(partial_verdict()), tiny_tok, AdapterRegistry(),
                           sampling=RL_SAMPLING.replace(group_size=2, max_tokens=20000),
                           episode=EpisodeConfig(max_turns=4))
    (g,) = asyncio.run(driver.run_groups([relu], modes=[Mode.REPAIR]))
    for ep in g.episodes:
        assert ep.error is None, ep.error
        r = ep.result
        assert r.end_reason is EndReason.FINALIZED and r.turns == 3 and r.submissions == 1
        assert r.reward == pytest.approx(0.25)
        errors = [m["content"] for m in r.transcript if m["role"] == "tool" and m["content"].startswith("error")]
        assert len(errors) == 2 and "nested too deeply" in errors[1]  # the first has no name to keep
