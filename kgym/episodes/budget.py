"""Token budgets for tool observations: a token count, and trimming a text to fit one.

The count is either a tokenizer's (`tokenizer_counter(tok)`) or `estimate_tokens`: one token per
3 UTF-8 bytes, rounded up. BPE tokenizers of current code models average more bytes per token on
Python source and tracebacks, so the estimate errs towards too many tokens and a trimmed text fits
the real budget. Trimming keeps the head and, with twice the room, the tail of a text (a traceback
ends with the error) and says how much was cut. Does not decide budgets: `EpisodeConfig` does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

TokenCounter = Callable[[str], int]
BYTES_PER_TOKEN = 3


def estimate_tokens(text: str) -> int:
    """ceil(UTF-8 bytes / 3): a deliberately high estimate of a BPE token count."""
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


def tokenizer_counter(tokenizer: Any) -> TokenCounter:
    """A counter from a Hugging Face tokenizer (anything with `encode(text, add_special_tokens=...)`)."""
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False))


def _cut(text: str, keep: int) -> str:
    head = keep // 3
    tail = keep - head
    lines_cut = text[head:len(text) - tail].count("\n")
    return (f"{text[:head]}\n[... {len(text) - keep} characters ({lines_cut} lines) trimmed to fit the token "
            f"budget ...]\n{text[len(text) - tail:]}")


def trim_to_budget(text: str, budget: int, count: TokenCounter = estimate_tokens) -> str:
    """`text` unchanged if `count(text) <= budget`, else its head and tail with a marker between,
    as long as fits (the longest fitting length is found by bisection over characters)."""
    if budget <= 0:
        raise ValueError("a token budget must be positive")
    if count(text) <= budget:
        return text
    lo, hi = 0, len(text) - 1  # characters kept: lo always fits (or is 0)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(_cut(text, mid)) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return _cut(text, lo) if lo > 0 or count(_cut(text, 0)) <= budget else text[: budget]
