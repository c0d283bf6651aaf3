"""Prompts: the single-turn prompt and the repair episode's opening messages and tool schemas.

Single-turn follows KernelBench's layout (instructions, one worked example, the architecture to
optimise, the answer format) in kgym's own words; the KernelBench evaluation job builds its prompts
from a KernelBench checkout instead, byte for byte. Repair mode is a chat: a system prompt with the
rules, a user message with the task, and three OpenAI-style function tools (`submit_kernel`,
`inspect_evaluation`, `finalize`) that `kgym.episodes` implements. Scaffold and epilogue tasks carry
their scaffold. Does not call a model or parse answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # task.py imports this module to build its prompts
    from kgym.tasks.task import Task

_EXAMPLE = Path(__file__).parent / "prompt_example"
MAX_SUBMISSIONS = 4


def _example() -> tuple[str, str]:
    return (_EXAMPLE / "reference.py").read_text(), (_EXAMPLE / "solution.py").read_text()


def _rules(task: Task) -> str:
    lines = [
        "Rules:",
        "- Define `class ModelNew(nn.Module)` with the same constructor arguments and forward() signature as "
        "`Model`; it must return the same outputs (FP32, tolerance 1e-4 scaled by magnitude).",
        "- Imports allowed: torch, torch.nn, torch.nn.functional, triton, triton.language, math.",
    ]
    if task.hybrid:
        lines.append("- forward() may make exactly one library call (a cuBLAS GEMM such as torch.mm/F.linear, "
                     "or a cuDNN convolution); every other computation must run in your Triton kernels.")
    else:
        lines.append("- All arithmetic in forward() must run in your Triton kernels; PyTorch may only allocate "
                     "tensors, make views and copy.")
    lines += [
        "- Parameters: create them in __init__ exactly as `Model` does (same modules, same order), so both "
        "models hold the same weights for the same seed.",
        "- Your kernels are checked on hidden inputs (other seeds, scaled by 3 and 0.01, negated, absolute "
        "value) and timed against PyTorch on the same GPU; a faster correct kernel earns more reward.",
    ]
    return "\n".join(lines)


def _scaffold_block(task: Task) -> str:
    if task.scaffold is None:
        return ""
    if task.spec.stage == "epilogue":
        intro = ("This is the epilogue stage: the library GEMM/convolution below is kept; write the fused "
                 "tail in Triton where the TODO says.")
    else:
        intro = ("This is the scaffold stage: the host code and tile offsets are written for you; complete the "
                 "kernel where the TODO says, and keep the rest.")
    return f"\n{intro}\n\n```python\n{task.scaffold.rstrip()}\n```\n"


def single_turn_prompt(task: Task) -> str:
    ex_ref, ex_sol = _example()
    return (
        "You write custom Triton kernels that replace the PyTorch operators of a given architecture, to make "
        "it faster on an NVIDIA GPU while computing the same result.\n\n"
        "Here is an example architecture:\n\n"
        f"```python\n{ex_ref.rstrip()}\n```\n\n"
        "and an answer with a Triton kernel:\n\n"
        f"```python\n{ex_sol.rstrip()}\n```\n\n"
        f"Now the architecture to optimise ({task.description}):\n\n"
        f"```python\n{task.reference.rstrip()}\n```\n"
        f"{_scaffold_block(task)}\n"
        f"{_rules(task)}\n\n"
        "Answer with the complete new architecture, named ModelNew, in one ```python code block. "
        "Give real, compilable code only: no testing code, no explanation after the block."
    )


TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "submit_kernel",
        "description": "Submit a complete answer (a Python module defining ModelNew with Triton kernels) for "
                       "verification. Returns an evaluation id and a short status.",
        "parameters": {"type": "object", "properties": {
            "code": {"type": "string", "description": "the full Python source of the answer"}},
            "required": ["code"]}}},
    {"type": "function", "function": {
        "name": "inspect_evaluation",
        "description": "Show the details of an evaluation: the first failing gate, the compiler traceback, "
                       "the mismatching hidden case and a summary of the difference, or the timings.",
        "parameters": {"type": "object", "properties": {
            "evaluation_id": {"type": "string", "description": "an id returned by submit_kernel"}},
            "required": ["evaluation_id"]}}},
    {"type": "function", "function": {
        "name": "finalize",
        "description": "End the episode; the reward is that of the given evaluation.",
        "parameters": {"type": "object", "properties": {
            "evaluation_id": {"type": "string", "description": "the evaluation to be scored"}},
            "required": ["evaluation_id"]}}},
]


def repair_system_prompt(max_submissions: int = MAX_SUBMISSIONS) -> str:
    return (
        "You are optimising PyTorch code with custom Triton kernels on an NVIDIA GPU. You work in turns, "
        "through tools:\n"
        "- submit_kernel(code): verify a complete answer; you get an evaluation id and a status.\n"
        "- inspect_evaluation(evaluation_id): read why it failed (compiler traceback, mismatching case) or "
        "how fast it ran.\n"
        "- finalize(evaluation_id): end the episode and be scored on that evaluation.\n"
        f"You may submit at most {max_submissions} times; each extra submission costs a little reward, so "
        "fix what the evaluation tells you rather than guessing. Finalize your best passing evaluation."
    )


def repair_messages(task: Task, max_submissions: int = MAX_SUBMISSIONS) -> list[dict[str, Any]]:
    user = (
        f"Optimise this architecture ({task.description}) with Triton kernels:\n\n"
        f"```python\n{task.reference.rstrip()}\n```\n"
        f"{_scaffold_block(task)}\n"
        f"{_rules(task)}"
    )
    return [{"role": "system", "content": repair_system_prompt(max_submissions)},
            {"role": "user", "content": user}]
