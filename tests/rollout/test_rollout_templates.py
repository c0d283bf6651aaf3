"""Repair turns rendered by real models' chat templates: the Qwen3-family templates TRL ships
(`qwen3_8.jinja`, `qwen3_6.jinja`: they iterate tool-call `arguments|items`) and Llama 3.1's
(`llama3_1.jinja`: `arguments|tojson`, one tool call per message). Tool-call arguments reach the
template as a mapping; a template that raises ends its own episode with the reason, never the
others or the job. A scripted engine and a canned verdict: no vLLM, no verifier (issue 28, point 3)."""

from __future__ import annotations

import asyncio
import copy
import re
from pathlib import Path

import pytest
from rollout_helpers import CannedEvaluator, ScriptedEngine, partial_verdict, tool_call_text

from kgym.contract import EndReason, Mode
from kgym.episodes import EpisodeConfig
from kgym.rollout.adapters import AdapterRegistry
from kgym.rollout.batcher import GenerationBatcher
from kgym.rollout.chat_form import template_arguments
from kgym.rollout.driver import RolloutDriver
from kgym.rollout.sampling import RL_SAMPLING
from kgym.rollout.toolcalls import parse_tool_calls
from kgym.rollout.turn_prompts import ChatPrompter
from kgym.tasks import make
from kgym.tasks.prompts import TOOLS

trl = pytest.importorskip("trl")
TEMPLATES = Path(trl.__file__).parent / "chat_templates"


def templated(tok, name: str):
    t = copy.deepcopy(tok)
    t.chat_template = (TEMPLATES / f"{name}.jinja").read_text()
    return t


@pytest.fixture(scope="module")
def relu():
    return make("relu-v1", seed=1, size="tiny")


def submit_then_finalize(code: str, calls_on_turn_1: int = 1):
    def script(prompt: str) -> str:
        ids = re.findall(r"evaluation_id: ([0-9a-f]{8,})", prompt)
        if ids:
            return tool_call_text("finalize", evaluation_id=ids[-1])
        return "I will submit.\n" + "\n".join([tool_call_text("submit_kernel", code=code)] * calls_on_turn_1)
    return script


def run(tok, engine_script, tasks, group_size=2, modes=None):
    engine = ScriptedEngine(tok, engine_script)
    driver = RolloutDriver(GenerationBatcher(engine), CannedEvaluator(partial_verdict()), tok, AdapterRegistry(),
                           sampling=RL_SAMPLING.replace(group_size=group_size), episode=EpisodeConfig(max_turns=4))
    return asyncio.run(driver.run_groups(tasks, modes=modes or [Mode.REPAIR] * len(tasks)))


@pytest.mark.parametrize("name", ["qwen3_8", "qwen3_6", "llama3_1"])
def test_a_repair_episode_renders_with_the_models_own_template(tiny_tok, relu, name):
    tok = templated(tiny_tok, name)
    (g,) = run(tok, submit_then_finalize(relu.wrong), [relu])
    for ep in g.episodes:
        assert ep.error is None, ep.error
        r = ep.result
        assert r.end_reason is EndReason.FINALIZED and r.turns == 2 and r.submissions == 1
        assert r.reward == pytest.approx(0.25)  # the canned verdict's partial credit, scored


def test_the_template_sees_arguments_as_an_object(tiny_tok):
    parsed = parse_tool_calls(tool_call_text("submit_kernel", code="x = 1"), id_prefix="c")
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}, parsed.message,
                {"role": "tool", "tool_call_id": "c_0", "name": "submit_kernel", "content": "ok"}]
    qwen = ChatPrompter(templated(tiny_tok, "qwen3_6"), TOOLS).render(messages, True)
    assert "<function=submit_kernel>\n<parameter=code>\nx = 1\n</parameter>" in qwen
    llama = ChatPrompter(templated(tiny_tok, "llama3_1"), TOOLS).render(messages, True)
    assert '"parameters": {"code": "x = 1"}' in llama  # not the JSON text as one quoted string
    # the transcript keeps OpenAI's form; a malformed call still renders, its text kept
    assert isinstance(parsed.message["tool_calls"][0]["function"]["arguments"], str)
    assert template_arguments("{not json") == {"raw": "{not json"} and template_arguments("") == {}


def test_a_template_error_ends_only_its_episode(tiny_tok, relu):
    """Llama 3.1's template refuses two tool calls in one message: the episode that made two ends with
    the reason, truncated and scored (its last submission, churn included: 0.25 - 0.05), never a kgym
    error that would drop it from training (red team 2026-12-07: a failing episode could shed its
    negative reward by ending on a message its template refuses); the other group's episodes finish
    and are scored."""
    softmax = make("softmax-v1", seed=1, size="tiny")
    tok = templated(tiny_tok, "llama3_1")
    two, one = submit_then_finalize(relu.wrong, calls_on_turn_1=2), submit_then_finalize(softmax.wrong)

    def script(prompt: str) -> str:
        return two(prompt) if "relu" in prompt.lower() else one(prompt)

    bad, good = run(tok, script, [relu, softmax])
    for ep in bad.episodes:
        assert ep.error is None and len(ep.turns) == 1
        r = ep.result
        assert r.end_reason is EndReason.UNRENDERABLE and r.truncated and r.error is None
        assert r.reason.startswith("prompt of turn 2 could not be rendered") and "single tool-calls" in r.reason
        assert r.submissions == 2 and r.reward == pytest.approx(0.2)
    for ep in good.episodes:
        assert ep.error is None and ep.result.end_reason is EndReason.FINALIZED
