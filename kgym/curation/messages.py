"""The chat a dataset row teaches: system, user (the task's single-turn prompt), assistant (the answer).

The user turn is kgym's single-turn prompt for the task (`Task.prompt()`: the reference in
KernelBench form at the verified scale, the rules, the answer format), so SFT sees the prompt the gym
and the evaluation pose; the assistant turn is the verified answer in one ```python block, the
format `kgym.episodes` extracts. Does not tokenise (`length.py`).
"""

from __future__ import annotations

DEFAULT_SYSTEM = ("You are an expert GPU programmer. You rewrite PyTorch modules as fast, correct Triton "
                  "kernels.")


def assistant_turn(answer: str) -> dict[str, str]:
    """The assistant message that teaches `answer`: the code in one ```python block."""
    return {"role": "assistant", "content": f"```python\n{answer.rstrip()}\n```"}


def chat(system: str, prompt: str, answer: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": prompt}, assistant_turn(answer)]
