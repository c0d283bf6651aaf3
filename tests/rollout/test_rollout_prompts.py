"""Turn prompts (`kgym.rollout.turn_prompts.ChatPrompter`) on a toy character tokenizer: later turns
extend the previous prompt + completion, a cut-off completion is closed with the end-of-turn token,
a template that re-renders earlier turns falls back to a full rendering, and thinking reaches the
template. No model, no vLLM."""

from __future__ import annotations

from kgym.rollout.turn_prompts import ChatPrompter

EOS = "<E>"


class CharTok:
    """One id per character (the end-of-turn marker is one id); a ChatML-like template."""

    eos_token = EOS
    eos_token_id = 0

    def __init__(self, rerender_last_only: bool = False):
        self.seen_kwargs: list[dict] = []
        self.rerender = rerender_last_only

    def apply_chat_template(self, messages, tools=None, tokenize=False, add_generation_prompt=False, **kw):
        self.seen_kwargs.append(kw)
        parts = []
        for i, m in enumerate(messages):
            body = m.get("content") or ""
            if self.rerender and m["role"] == "assistant" and i != len(messages) - 1:
                body = body.upper()  # a template that rewrites earlier assistant turns
            parts.append(f"[{m['role']}]{body}{EOS}\n")
        return "".join(parts) + ("[assistant]" if add_generation_prompt else "")

    def encode(self, text, add_special_tokens=False):
        out, i = [], 0
        while i < len(text):
            if text.startswith(EOS, i):
                out.append(0)
                i += len(EOS)
            else:
                out.append(ord(text[i]))
                i += 1
        return out


def test_next_turn_extends_the_stream_and_thinking_reaches_the_template():
    tok = CharTok()
    p = ChatPrompter(tok, thinking=True)
    opening = [{"role": "user", "content": "hi"}]
    first = p.first(opening)
    assert first.rebuilt and tok.seen_kwargs[-1] == {"enable_thinking": True}
    completion = tuple(tok.encode("ok")) + (0,)
    nxt = p.next(first.ids, completion, opening + [{"role": "assistant", "content": "ok"}],
                 [{"role": "tool", "content": "r"}])
    assert not nxt.rebuilt and nxt.ids[:len(first.ids) + len(completion)] == first.ids + completion
    assert nxt.ids[len(first.ids) + len(completion):] == tuple(tok.encode("\n[tool]r" + EOS + "\n[assistant]"))


def test_a_cut_off_completion_is_closed_with_the_end_of_turn_token():
    tok = CharTok()
    p = ChatPrompter(tok)
    opening = [{"role": "user", "content": "hi"}]
    first = p.first(opening)
    cut = tuple(tok.encode("partial"))
    nxt = p.next(first.ids, cut, opening + [{"role": "assistant", "content": "partial"}],
                 [{"role": "user", "content": "again"}])
    assert nxt.ids[len(first.ids) + len(cut)] == 0 and not nxt.rebuilt


def test_a_template_that_rewrites_earlier_turns_falls_back_to_a_full_rendering():
    tok = CharTok(rerender_last_only=True)
    p = ChatPrompter(tok)
    opening = [{"role": "user", "content": "hi"}]
    first = p.first(opening)
    msgs = opening + [{"role": "assistant", "content": "ok"}]
    nxt = p.next(first.ids, tuple(tok.encode("ok")) + (0,), msgs, [{"role": "tool", "content": "r"}])
    assert nxt.rebuilt and nxt.ids == tuple(tok.encode(tok.apply_chat_template(
        msgs + [{"role": "tool", "content": "r"}], add_generation_prompt=True)))
