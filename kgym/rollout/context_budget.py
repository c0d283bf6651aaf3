"""How many new tokens a turn may ask for inside the engine's context: `ContextBudget`.

A repair episode's prompt grows by every completion and tool message (up to 6,144 sampled tokens
a turn, plus inspect answers), and the engine refuses a prompt of `max_model_len` tokens or more
(vLLM: "longer than the maximum model length"). The driver asks before each turn:

    budget = ContextBudget(max_model_len=16384, min_generation_tokens=1024)
    budget.max_tokens(prompt_tokens, wanted=6144)   # wanted, capped to the room left; 0: no room

- room = max_model_len - prompt tokens;
- the turn is given min(wanted, room) new tokens: a turn near the end of the context is cut off by
  the context rather than refused (its finish reason is `length`, as for any turn at its cap);
- under min(wanted, min_generation_tokens) of room the turn is not worth generating (a kernel in a
  tool call needs hundreds of tokens): 0, and the driver ends the episode as truncated
  (`EndReason.CONTEXT_LIMIT`), scored with what it has, as the turn limit is.
`reason` says so in one line for the episode's record. Does not tokenize or call the engine.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ContextBudget:
    max_model_len: int  # the engine's: prompt + completion of one generation
    min_generation_tokens: int = 1024  # less room than this (or than wanted, if smaller) ends the episode

    def __post_init__(self) -> None:
        if self.max_model_len < 2 or self.min_generation_tokens < 1:
            raise ValueError("need max_model_len >= 2 and min_generation_tokens >= 1")

    def room(self, prompt_tokens: int) -> int:
        return self.max_model_len - prompt_tokens

    def max_tokens(self, prompt_tokens: int, wanted: int) -> int:
        """New tokens a turn with this prompt may ask for: `wanted` capped to the room; 0 when the room
        is under min(wanted, min_generation_tokens)."""
        room = self.room(prompt_tokens)
        return min(wanted, room) if room >= min(wanted, self.min_generation_tokens) else 0

    def reason(self, turn: int, prompt_tokens: int, wanted: int) -> str:
        room = max(self.room(prompt_tokens), 0)
        return (f"context limit: turn {turn}'s prompt ({prompt_tokens} tokens) leaves {room} "
                f"of max_model_len {self.max_model_len}, under the {min(wanted, self.min_generation_tokens)} "
                f"a turn needs to generate")
