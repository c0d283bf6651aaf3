"""The token ids of each turn's prompt in a multi-turn episode, built so that turn k+1's prompt
extends turn k's prompt + completion token for token.

Why not re-render the whole conversation each turn: the chat template would re-render the model's
own message from its parsed content and tool calls, and a model's text rarely re-tokenizes to the
tokens it sampled (spacing inside the JSON, a different BPE split). The learner must score exactly
the tokens the sampler conditioned on, so the prompt of a later turn is the previous turn's
prompt + completion, then the tokens of what the template adds after the assistant's message (the
end-of-turn token if the completion lacks it, the tool/user messages, the next assistant header).
That added text is the difference between two renderings of the template: the conversation with
the new messages and a generation prompt, minus the conversation up to the assistant's message,
cut at its last end-of-turn token. When the template is not prefix-stable (the second rendering
does not start with the first), the prompt falls back to a full rendering and `TurnPrompt.rebuilt`
says so; `kgym.episodes.flatten` then keeps one learner sample per turn.

The tokenizer is anything with Hugging Face's `apply_chat_template(messages, tools=..., tokenize=False,
add_generation_prompt=..., **template_kwargs)` and `encode(text, add_special_tokens=False)`;
`enable_thinking` is passed to the template (Qwen3-style templates read it; others ignore it).
Messages reach the template in its own form (`chat_form.template_messages`: tool-call arguments
as a mapping, which Qwen3-family templates iterate). A template that raises (Llama 3.1's refuses
two tool calls in one message) raises out of `first`/`next`: the driver ends that episode alone.
Does not generate, and imports neither torch nor vLLM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgym.rollout.chat_form import template_messages


@dataclass(frozen=True)
class TurnPrompt:
    ids: tuple[int, ...]
    rebuilt: bool  # True: a full rendering (turn 1, or the template was not prefix-stable)


class ChatPrompter:
    def __init__(self, tokenizer: Any, tools: list[dict[str, Any]] | None = None, *, thinking: bool = False,
                 eos_text: str | None = None):
        self.tokenizer = tokenizer
        self.tools = tools
        self.thinking = thinking
        self.eos_text = eos_text if eos_text is not None else getattr(tokenizer, "eos_token", None) or ""
        self.eos_id = getattr(tokenizer, "eos_token_id", None)

    def render(self, messages: list[dict[str, Any]], generation_prompt: bool) -> str:
        return self.tokenizer.apply_chat_template(template_messages(messages), tools=self.tools, tokenize=False,
                                                  add_generation_prompt=generation_prompt,
                                                  enable_thinking=self.thinking)

    def encode(self, text: str) -> tuple[int, ...]:
        return tuple(self.tokenizer.encode(text, add_special_tokens=False))

    def first(self, messages: list[dict[str, Any]]) -> TurnPrompt:
        return TurnPrompt(self.encode(self.render(messages, True)), True)

    def next(self, prompt_ids: tuple[int, ...], completion_ids: tuple[int, ...],
             through_assistant: list[dict[str, Any]], observation: list[dict[str, Any]]) -> TurnPrompt:
        """The prompt after the assistant's message (the last of `through_assistant`) and the env's
        `observation` messages."""
        before = self.render(through_assistant, False)
        after = self.render(through_assistant + observation, True)
        cut = before.rfind(self.eos_text) + len(self.eos_text) if self.eos_text and self.eos_text in before else -1
        if cut < 0 or not after.startswith(before[:cut]):
            return TurnPrompt(self.encode(after), True)
        added = after[cut:]
        ended = bool(completion_ids) and self.eos_id is not None and completion_ids[-1] == self.eos_id
        if not ended:
            added = self.eos_text + added  # cut off at the token limit: close the turn as the template would
        return TurnPrompt(tuple(prompt_ids) + tuple(completion_ids) + self.encode(added), False)
