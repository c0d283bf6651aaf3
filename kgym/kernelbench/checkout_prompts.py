"""Prompts by the checkout's own code: KernelBench's Triton-backend, one-shot, FP32 prompt.

The prompt text lives in the checkout (its templates and its example files), so kgym never holds it:
`build_prompts` imports the checkout's prompt constructor and calls its `get_prompt_for_backend`
with each problem's source. Layouts looked for, newest first:

    src/kernelbench/prompt_constructor_toml.py   imported as kernelbench.prompt_constructor_toml
    src/prompt_constructor_toml.py               imported as src.prompt_constructor_toml
    src/prompt_constructor_multilang.py          imported as src.prompt_constructor_multilang

Arguments the function does not take (older constructors have no `option` or `precision`: they are
one-shot FP32 by construction) are not passed. A checkout with none of these, or whose module lacks
the function, is a `KernelBenchError` naming what is missing; so is a constructor whose own imports
fail (KernelBench's `src/utils.py` imports its API clients at the top: install the checkout's
requirements in the same environment). The import is isolated: the checkout's
top-level packages (`src`, `kernelbench`) are dropped from `sys.modules` before and after, so two
checkouts in one process do not mix. Covers building and writing prompt rows; not generating answers.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from kgym.kernelbench.checkout import Checkout, KernelBenchError, Problem

BACKEND = "triton"
OPTION = "one_shot"
PRECISION = "fp32"
FUNCTION = "get_prompt_for_backend"
# (module name, sys.path entry relative to the checkout, file relative to the checkout)
LAYOUTS = (
    ("kernelbench.prompt_constructor_toml", "src", "src/kernelbench/prompt_constructor_toml.py"),
    ("src.prompt_constructor_toml", ".", "src/prompt_constructor_toml.py"),
    ("src.prompt_constructor_multilang", ".", "src/prompt_constructor_multilang.py"),
)


@dataclass(frozen=True)
class PromptRow:
    """One line of the prompts JSONL: what a generator needs to answer one problem (one sample)."""

    level: int
    problem_id: int
    name: str
    prompt: str
    backend: str = BACKEND
    option: str = OPTION
    precision: str = PRECISION
    constructor: str = ""  # the checkout module that built it
    sample: int = 0
    seed: int | None = None  # the generator's sampling seed for this sample (multi-sample runs)


def _drop(prefixes: tuple[str, ...]) -> None:
    for name in list(sys.modules):
        if name.split(".")[0] in prefixes:
            del sys.modules[name]


@contextlib.contextmanager
def prompt_function(checkout: Checkout) -> Iterator[tuple[str, Callable[..., str]]]:
    """The checkout's `get_prompt_for_backend` (and its module's name), imported in isolation."""
    root = checkout.root
    found = [(mod, entry, rel) for mod, entry, rel in LAYOUTS if (root / rel).is_file()]
    if not found:
        wanted = ", ".join(rel for _, _, rel in LAYOUTS)
        raise KernelBenchError(f"{root}: no prompt constructor found (looked for {wanted}); point --kernelbench "
                               f"at a full KernelBench repository checkout, not only its problem folders")
    mod_name, entry, rel = found[0]
    tops = ("src", "kernelbench")
    path_entry = str((root / entry).resolve())
    saved_path, saved_cwd = list(sys.path), os.getcwd()
    _drop(tops)
    sys.path.insert(0, path_entry)
    try:
        # Some constructors resolve their template files from the working directory.
        os.chdir(root)
        # The constructors' src/utils.py imports litellm, which otherwise fetches a model price list
        # from the network at import (and hangs or fails on machines without internet).
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            module = importlib.import_module(mod_name)
        except Exception as e:  # noqa: BLE001 - whatever the checkout's import raises, say which file failed
            hint = (f" (the checkout's own dependencies are missing: pip install -r {root / 'requirements.txt'} "
                    f"or pip install -e {root})") if isinstance(e, ImportError) else ""
            raise KernelBenchError(
                f"{root / rel}: importing {mod_name} failed: {type(e).__name__}: {e}{hint}") from None
        fn = getattr(module, FUNCTION, None)
        if not callable(fn):
            raise KernelBenchError(f"{root / rel}: has no function {FUNCTION}(ref_arch_src, backend=...)")
        yield mod_name, fn
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        _drop(tops)


def _call(fn: Callable[..., str], source: str, backend: str, option: str, precision: str) -> str:
    params = inspect.signature(fn).parameters
    kwargs: dict[str, str] = {"backend": backend}
    if "option" in params:
        kwargs["option"] = option
    elif option != OPTION:
        raise KernelBenchError(f"this checkout's {FUNCTION} has no option argument: only {OPTION} is possible")
    if "precision" in params:
        kwargs["precision"] = precision
    elif precision != PRECISION:
        raise KernelBenchError(f"this checkout's {FUNCTION} has no precision argument: only {PRECISION} is possible")
    text = fn(source, **kwargs)
    if not isinstance(text, str) or not text.strip():
        raise KernelBenchError(f"{FUNCTION} returned no prompt text")
    return text


def build_prompts(checkout: Checkout, level: int, *, ids: list[int] | None = None, backend: str = BACKEND,
                  option: str = OPTION, precision: str = PRECISION, samples: int = 1,
                  seed: int = 0) -> list[PromptRow]:
    """One row per problem of `level` (per sample when `samples` > 1, with seeds seed, seed+1, ...)."""
    if samples < 1:
        raise KernelBenchError("samples must be at least 1")
    problems: list[Problem] = checkout.problems(level, ids)
    rows = []
    with prompt_function(checkout) as (mod_name, fn):
        os.chdir(checkout.root)
        for p in problems:
            text = _call(fn, p.source, backend, option, precision)
            for k in range(samples):
                rows.append(PromptRow(level=p.level, problem_id=p.problem_id, name=p.name, prompt=text,
                                      backend=backend, option=option, precision=precision, constructor=mod_name,
                                      sample=k, seed=seed + k if samples > 1 else None))
    return rows


def write_prompts(rows: list[PromptRow], out: str | Path) -> Path:
    """JSONL, one object per row; written to a temporary name and renamed."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps(asdict(r)) + "\n")
    os.replace(tmp, path)
    return path
