"""The tiny model of the RL tests, built locally in seconds (nothing is downloaded).

Reuses `examples/trl_grpo_tiny.py`'s builders (a byte-level BPE tokenizer trained here, wrapped as
`PreTrainedTokenizerFast` with TRL's ChatML template; a `Qwen2Config` with vocab = the tokenizer's,
hidden 128, 2 layers, 4 heads, random weights), so the RL tests and the TRL example share one model.
`save_tiny(dir)` writes both as a Hugging Face model directory, which is what the learner loads.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "trl_grpo_tiny.py"
_spec = importlib.util.spec_from_file_location("kgym_trl_grpo_tiny", EXAMPLE)
_example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_example)


def corpus() -> list[str]:
    """A few KB of text to train the tokenizer on: the RL package's own sources."""
    root = Path(__file__).resolve().parents[2] / "kgym" / "rl"
    return [p.read_text() for p in sorted(root.glob("*.py"))]


def tiny_tokenizer():
    return _example.tiny_tokenizer(corpus())


def tiny_model(tokenizer):
    return _example.tiny_model(tokenizer)


def save_tiny(directory: Path) -> tuple[Path, object]:
    tok = tiny_tokenizer()
    model = tiny_model(tok)
    model.save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory, tok
