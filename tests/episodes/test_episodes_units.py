"""Units without the verifier: token budgets, tool-call parsing, the mode mix, the env's contract."""

import json

import pytest

from kgym.episodes import EpisodeConfig, ModeMix, estimate_tokens, parse_tool_call, trim_to_budget
from kgym.tasks.prompts import TOOLS


def test_estimate_is_bytes_over_three():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1 and estimate_tokens("abcd") == 2
    assert estimate_tokens("é") == 1  # two UTF-8 bytes


def test_trim_keeps_short_text_and_cuts_long_text_to_budget():
    assert trim_to_budget("short", 10) == "short"
    text = "\n".join(f"line {i}: " + "x" * 40 for i in range(400)) + "\nValueError: the real error"
    out = trim_to_budget(text, 200)
    assert estimate_tokens(out) <= 200
    assert out.startswith("line 0:") and out.endswith("ValueError: the real error")
    assert "trimmed to fit the token budget" in out


def test_trim_with_a_custom_counter():
    words = lambda s: len(s.split())  # noqa: E731
    out = trim_to_budget(" ".join(f"w{i}" for i in range(1000)), 50, words)
    assert words(out) <= 50 and out.startswith("w0") and out.endswith("w999")


def test_parse_openai_and_dict_arguments():
    c, err = parse_tool_call({"id": "a", "type": "function",
                              "function": {"name": "finalize", "arguments": json.dumps({"evaluation_id": "x"})}}, "d")
    assert err == "" and c.call_id == "a" and c.arguments == {"evaluation_id": "x"}
    c, err = parse_tool_call({"function": {"name": "submit_kernel", "arguments": {"code": "y"}}}, "d")
    assert err == "" and c.call_id == "d" and c.name == "submit_kernel"


@pytest.mark.parametrize("raw, words", [
    ("not a dict", "malformed tool call"),
    ({"type": "function"}, "malformed tool call"),
    ({"function": {"arguments": "{}"}}, "no name"),
    ({"function": {"name": "rm_rf", "arguments": "{}"}}, "unknown tool"),
    ({"function": {"name": "finalize", "arguments": "{not json"}}, "not valid JSON"),
    ({"function": {"name": "finalize", "arguments": "[1]"}}, "expected a JSON object"),
    ({"function": {"name": "finalize", "arguments": "{}"}}, "missing evaluation_id"),
    ({"function": {"name": "finalize", "arguments": {"evaluation_id": "x", "extra": 1}}}, "unexpected extra"),
    ({"function": {"name": "submit_kernel", "arguments": {"code": 3}}}, "must be a string"),
])
def test_malformed_calls_are_errors_not_exceptions(raw, words):
    c, err = parse_tool_call(raw, "d")
    assert c is None and words in err


def test_tool_names_match_the_prompt_schemas():
    from kgym.episodes import TOOL_NAMES
    assert TOOL_NAMES == ("submit_kernel", "inspect_evaluation", "finalize")
    assert [t["function"]["name"] for t in TOOLS] == list(TOOL_NAMES)


def test_mode_mix_is_seeded_per_group_and_near_its_fraction():
    mix = ModeMix()
    keys = [f"g{i}" for i in range(4000)]
    modes = [mix.mode(k) for k in keys]
    assert modes == [mix.mode(k) for k in keys]  # deterministic
    assert abs(modes.count("single") / len(keys) - 0.25) < 0.03
    assert modes != [ModeMix(seed=1).mode(k) for k in keys]
    assert {ModeMix(0.0).mode(k) for k in keys[:100]} == {"repair"}
    assert {ModeMix(1.0).mode(k) for k in keys[:100]} == {"single"}
    with pytest.raises(ValueError):
        ModeMix(1.5)


def test_config_rejects_nonsense_limits():
    with pytest.raises(ValueError):
        EpisodeConfig(max_submissions=0)
