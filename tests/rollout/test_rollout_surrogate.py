"""Exploit: a lone-surrogate escape in a tool call's code (red team, 2026-12-07).

The model's text is ASCII-clean, but JSON's `"\\ud800"` escape decodes to a lone surrogate: the code
string could not be hashed (`source_hash` encodes it as UTF-8), so submit_kernel raised
UnicodeEncodeError out of the env's step and the rollout's gather, failing the RL step. Now every tool
argument must be valid Unicode: such a call is an error the model reads, nothing is verified and no
submission is counted. The honest edge: code with real non-ASCII text (and JSON escapes of it) is
submitted and scored as before. Single-turn extraction refuses such a block as well."""

from __future__ import annotations

import asyncio
import re

import pytest
from rollout_helpers import CannedEvaluator, ScriptedEngine, partial_verdict, tool_call_text

from kgym.answers import extract_code
from kgym.contract import EndReason, Mode
from kgym.episodes import EpisodeConfig
from kgym.rollout.adapters import AdapterRegistry
from kgym.rollout.batcher import GenerationBatcher
from kgym.rollout.driver import RolloutDriver
from kgym.rollout.sampling import RL_SAMPLING
from kgym.tasks import make

# the model's own (ASCII) text: a JSON escape the decoder turns into a lone surrogate
SURROGATE_CALL = '<tool_call>{"name": "submit_kernel", "arguments": {"code": "x = 1  # \\ud800"}}</tool_call>'


def run_repair(tok, script, evaluator):
    relu = make("relu-v1", seed=1, size="tiny")
    driver = RolloutDriver(GenerationBatcher(ScriptedEngine(tok, script)), evaluator, tok, AdapterRegistry(),
                           sampling=RL_SAMPLING.replace(group_size=2), episode=EpisodeConfig(max_turns=4))
    (g,) = asyncio.run(driver.run_groups([relu], modes=[Mode.REPAIR]))
    return relu, g


def test_a_surrogate_escape_is_an_error_call_not_a_failed_step(tiny_tok):
    evaluator = CannedEvaluator(partial_verdict())

    def script(prompt: str) -> str:
        ids = re.findall(r"evaluation_id: ([0-9a-f]{8,})", prompt)
        if ids:
            return tool_call_text("finalize", evaluation_id=ids[-1])
        if "not valid Unicode" in prompt:
            return tool_call_text("submit_kernel", code="x = 2\n")
        return SURROGATE_CALL

    _, g = run_repair(tiny_tok, script, evaluator)
    for ep in g.episodes:
        assert ep.error is None, ep.error
        r = ep.result
        assert r.end_reason is EndReason.FINALIZED and r.turns == 3 and r.submissions == 1
        assert r.reward == pytest.approx(0.25) and [e.candidate for e in r.evaluations] == ["x = 2\n"]
    assert [q.candidate for q in evaluator.requests] == ["x = 2\n", "x = 2\n"]


def test_honest_non_ascii_code_is_submitted(tiny_tok):
    evaluator = CannedEvaluator(partial_verdict())
    code = "# d\u00e9j\u00e0 vu \u2713 \U0001F600\nx = 1\n"

    def script(prompt: str) -> str:
        ids = re.findall(r"evaluation_id: ([0-9a-f]{8,})", prompt)
        return tool_call_text("finalize", evaluation_id=ids[-1]) if ids else tool_call_text("submit_kernel", code=code)

    _, g = run_repair(tiny_tok, script, evaluator)
    for ep in g.episodes:
        assert ep.error is None and ep.result.end_reason is EndReason.FINALIZED
        assert ep.result.evaluations[0].candidate == code and ep.result.reward == pytest.approx(0.25)


def test_single_turn_extraction_refuses_a_surrogate_block():
    bad = extract_code("```python\nx = '\ud800'\n```\n")
    assert not bad.ok and "not valid Unicode" in bad.reason
    good = extract_code("```python\nx = '\u00e9'\n```\n")
    assert good.ok and good.code == "x = '\u00e9'\n"
