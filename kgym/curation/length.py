"""Stage 10 of the funnel: the token length of a row's whole chat under the target tokenizer.

The length is that of the chat as the tokenizer's own chat template renders it (system, user and
assistant turns with their markers), the sequence SFT trains on; a row over the limit (the study's
4,096) is dropped, not truncated. Needs transformers and the target model's tokenizer (a path or a
model id already in the local cache). Does not build the chat (`messages.py`).
"""

from __future__ import annotations


class TokenCounter:
    def __init__(self, tokenizer: str):
        from transformers import AutoTokenizer

        self.name = tokenizer
        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer)
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError(f"tokenizer {tokenizer!r} has no chat template: the length of a chat is undefined")

    def count(self, messages: list[dict[str, str]]) -> int:
        ids = self.tokenizer.apply_chat_template(messages, tokenize=True)
        ids = ids["input_ids"] if hasattr(ids, "keys") else ids  # transformers 5 returns a BatchEncoding
        return len(ids)
