"""The prefix rule against real chat templates: a repair episode rendered with the ChatML/Qwen2.5
template TRL ships flattens into one sample whose mask-0 tokens are exactly the tool results and the
template around them; a template that re-renders earlier turns (reasoning stripped from all but the
last assistant message, as Qwen3-style templates do) falls back to one sample per turn, as a value.
Tokenizer: examples/trl_grpo_tiny.py's, trained here in about a second (needs the `rl` extra)."""

import importlib.util
from pathlib import Path

import pytest

from kgym.episodes import FlattenKind, KernelEnv, TurnSample, flatten_episode
from kgym.tasks.prompts import TOOLS

from episodes_helpers import SleepyEvaluator, run

pytest.importorskip("trl")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "trl_grpo_tiny.py"

# ChatML that keeps an assistant message's reasoning only while it is the last message
STRIPPING = ("{%- for m in messages -%}<|im_start|>{{ m.role }}\n"
             "{%- if m.role == 'assistant' and not loop.last -%}{{ m.content.split('</think>')[-1] }}"
             "{%- else -%}{{ m.content }}{%- endif -%}<|im_end|>\n{%- endfor -%}"
             "{%- if add_generation_prompt -%}<|im_start|>assistant\n{%- endif -%}")


@pytest.fixture(scope="module")
def tokenizer(relu):
    spec = importlib.util.spec_from_file_location("kgym_trl_grpo_tiny", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example.tiny_tokenizer([relu.prompt()] + [m["content"] for m in relu.repair_messages()])


def render(tok, messages, generation_prompt, template):
    return tok.apply_chat_template(messages, tools=TOOLS, add_generation_prompt=generation_prompt, tokenize=False,
                                   chat_template=template)


def sampled(tok, messages, message, template):
    """The TurnSample a sampler would give for `message` after `messages`: the rendered prompt, and the
    message's own rendering up to its end-of-turn token as the completion."""
    prompt = render(tok, messages, True, template)
    full = render(tok, messages + [message], False, template)
    assert full.startswith(prompt)
    completion = full[len(prompt):]
    completion = completion[:completion.index("<|im_end|>") + len("<|im_end|>")]
    return TurnSample(tok.encode(prompt, add_special_tokens=False), tok.encode(completion, add_special_tokens=False))


def tool_message(name, **arguments):
    return {"role": "assistant", "content": "<think>\nplan\n</think>\nsubmitting",
            "tool_calls": [{"id": name, "type": "function", "function": {"name": name, "arguments": arguments}}]}


def episode(tok, relu, template=None):
    env = KernelEnv(SleepyEvaluator())

    async def main():
        await env.reset(relu, "repair")
        first = tool_message("submit_kernel", code=relu.solution)
        s = await env.step(first, sample=sampled(tok, env.messages, first, template))
        eid = s.observation[0]["content"].split("evaluation_id: ")[1].split()[0]
        last = tool_message("finalize", evaluation_id=eid)
        await env.step(last, sample=sampled(tok, env.messages, last, template))
        return env.result()

    return run(main())


def test_the_chatml_tool_template_keeps_the_prefix_property(tokenizer, relu):
    r = episode(tokenizer, relu)
    f = flatten_episode(r)
    assert f.kind is FlattenKind.ONE_SAMPLE
    (s,) = f.samples
    between = tokenizer.decode([t for t, m in zip(s.completion_ids, s.loss_mask) if m == 0])
    assert "<tool_response>" in between and "evaluation_id:" in between and "submit_kernel" not in between
    model = tokenizer.decode([t for t, m in zip(s.completion_ids, s.loss_mask) if m == 1])
    assert model.count("<tool_call>") == 2 and "finalize" in model and "evaluation_id:" not in model
    assert s.prompt_ids == r.turn_samples[0].prompt_ids


def test_a_template_that_strips_earlier_reasoning_falls_back_per_turn(tokenizer, relu):
    r = episode(tokenizer, relu, STRIPPING)
    f = flatten_episode(r)
    assert f.kind is FlattenKind.PER_TURN and "does not extend" in f.reason
    assert [s.prompt_ids for s in f.samples] == [t.prompt_ids for t in r.turn_samples]
    assert all(s.reward == r.reward and s.loss_tokens == len(s.completion_ids) for s in f.samples)
