"""Code extraction: which part of a model's answer is the candidate kernel.

    from kgym.answers import extract_code
    ext = extract_code(answer_text)      # ext.ok, ext.code, ext.kind, ext.reason

One torch-free module at the top of the library, so single-turn episodes, KernelBench evaluation
and SFT curation apply the same rule without importing each other. The rules:
- A fence is a line that starts (after at most 3 spaces) with three or more backticks; an opening
  fence may carry a language tag (```python). A block closes at the next fence line of at least as
  many backticks with no tag.
- Python blocks are those tagged `python`, `py` or `python3`, or untagged. Blocks tagged with another
  language (```bash, ```text) are never the answer.
- Several blocks: the last closed Python block wins (models revise; the prompt asks for one block).
  A tagged block is not preferred over an untagged one: position alone decides.
- No closed Python block: kind `no_block`, no code, reward 0.
- Truncated output: the answer ends inside an open fence (the generation hit its token limit while
  writing code). Kind `truncated`, no code, reward 0, even when an earlier block closed: the final
  answer was cut, and scoring an earlier draft would reward running out of budget.
- Raw code without fences is not accepted (kind `no_block`): the prompt asks for a fenced block.
- A block that is not valid Unicode (a lone surrogate: it cannot be hashed, verified or written) is
  kind `no_block`; a decoded model answer never holds one, a caller's string may.
Does not look inside `<think>` sections specially (the study ran with thinking off), and does not
check that the code is Python: the verifier's gates do that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

PYTHON_TAGS = ("", "python", "py", "python3")


class ExtractionKind(StrEnum):
    """What extraction found: a usable block, none, or an answer cut off inside a block."""

    OK = "ok"
    NO_BLOCK = "no_block"
    TRUNCATED = "truncated"

_FENCE = re.compile(r"^ {0,3}(`{3,})\s*([^\s`]*)[^`]*$")


@dataclass(frozen=True)
class Extraction:
    """The code taken from an answer, or why there is none."""

    kind: ExtractionKind
    code: str | None  # the source of the winning block (kind "ok" only)
    blocks: int  # closed Python blocks found
    reason: str  # one line for the model and the records

    @property
    def ok(self) -> bool:
        return self.kind is ExtractionKind.OK


def extract_code(text: str | None) -> Extraction:
    """The last closed fenced Python block of `text`, by the rules in this module's docstring."""
    if not text:
        return Extraction(ExtractionKind.NO_BLOCK, None, 0, "empty answer: no ```python code block")
    python_blocks: list[str] = []
    open_ticks = 0  # backticks of the open fence, 0 when outside a block
    open_tag = ""
    body: list[str] = []
    for line in text.splitlines():
        m = _FENCE.match(line)
        if open_ticks == 0:
            if m:
                open_ticks, open_tag, body = len(m.group(1)), m.group(2).lower(), []
            continue
        if m and not m.group(2) and len(m.group(1)) >= open_ticks:
            if open_tag in PYTHON_TAGS:
                python_blocks.append("\n".join(body) + "\n")
            open_ticks = 0
            continue
        body.append(line)
    n = len(python_blocks)
    if open_ticks:
        return Extraction(ExtractionKind.TRUNCATED, None, n, "the answer ends inside an unclosed ``` code block "
                                                             "(truncated output); nothing was verified")
    if not python_blocks:
        return Extraction(ExtractionKind.NO_BLOCK, None, 0, "no closed ```python code block in the answer")
    code = python_blocks[-1]
    if not code.strip():
        return Extraction(ExtractionKind.NO_BLOCK, None, n, "the last ```python code block is empty")
    if not encodes_as_utf8(code):
        return Extraction(ExtractionKind.NO_BLOCK, None, n, "the last ```python code block is not valid Unicode")
    why = "one ```python block" if n == 1 else f"the last of {n} ```python blocks"
    return Extraction(ExtractionKind.OK, code, n, why)


def encodes_as_utf8(text: str) -> bool:
    """`text` has no lone surrogate (it encodes as UTF-8): what code or a tool argument must be to be
    hashed, verified or written."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
