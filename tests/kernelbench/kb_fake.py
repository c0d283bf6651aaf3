"""A KernelBench-shaped checkout made of kgym's own problems (never KernelBench's): three tiny
problems over two levels, and a prompt constructor module with the real one's call signature, so
`kgym.kernelbench.checkout_prompts` goes through the same import and call path as against a real checkout."""

from __future__ import annotations

from pathlib import Path

_REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {expr}


def get_inputs():
    return [torch.randn(31, 17)]


def get_init_inputs():
    return []
'''

PROBLEMS = {  # (level, file name) -> forward expression
    (1, "1_TripleIt.py"): "x * 3.0",
    (1, "2_ShiftUp.py"): "x + 1.5",
    (2, "1_TripleThenClamp.py"): "torch.clamp(x * 3.0, min=0.0)",
}

# The constructor's own template lives in the checkout (as KernelBench's prompts.toml does).
_TEMPLATE = "Write {backend} kernels ({option}, {precision}) for this module.\nExample:\n{example}\nModule:\n{src}"

_CONSTRUCTOR_TOML = '''import os

REPO_TOP_PATH = os.path.abspath(os.path.join(os.path.dirname(__file__), "{up}"))


def get_prompt_for_backend(ref_arch_src, backend="triton", option="one_shot", precision=None,
                           include_hardware=False, gpu_name=None):
    with open(os.path.join(REPO_TOP_PATH, "src", "prompt_template.txt")) as f:
        template = f.read()
    with open(os.path.join(REPO_TOP_PATH, "src", "example_new.py")) as f:
        example = f.read()
    return template.format(backend=backend, option=option, precision=precision or "fp32", example=example,
                           src=ref_arch_src)
'''

_CONSTRUCTOR_OLD = '''def get_prompt_for_backend(ref_arch_src, backend="triton"):
    return "old constructor for " + backend + "\\n" + ref_arch_src
'''

# The multi-language constructor's shape (KernelBench's src/prompt_constructor_multilang.py): a module
# of the `src` package whose __init__ imports a sibling helpers module (the real one pulls in its API
# clients there), a relative import of that module's file reader, and example files found from the
# module's own path, not the working directory. Signature (ref_arch_src, backend) only.
_PACKAGE_INIT = "from . import helpers  # the package's import side effects, as the real one has\n"

_HELPERS = '''import os


def read_file(path):
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        return f.read()
'''

_CONSTRUCTOR_MULTILANG = '''import os

from .helpers import read_file

REPO_TOP_PATH = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def get_prompt_for_backend(ref_arch_src, backend="triton"):
    example = read_file(os.path.join(REPO_TOP_PATH, "src", "example_new.py"))
    if not example:
        raise FileNotFoundError("example answer not found")
    return "multilang constructor for " + backend + "\\nExample:\\n" + example + "Module:\\n" + ref_arch_src
'''


def make_checkout(root: Path, layout: str = "src") -> Path:
    """layout: "src" (src/prompt_constructor_toml.py), "package" (src/kernelbench/...), "old"
    (src/prompt_constructor_multilang.py without option/precision), "multilang" (the same file shaped
    like the real one: package __init__ importing a helpers module, relative import, example found
    from the module's path) or "none" (problems only)."""
    for (level, name), expr in PROBLEMS.items():
        f = root / "KernelBench" / f"level{level}" / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(_REFERENCE.format(expr=expr))
    (root / "KernelBench" / "level1" / "README.txt").write_text("not a problem\n")
    src = root / "src"
    if layout == "none":
        return root
    src.mkdir(parents=True, exist_ok=True)
    (src / "prompt_template.txt").write_text(_TEMPLATE)
    (src / "example_new.py").write_text("# an example answer of the fake checkout\n")
    if layout == "src":
        (src / "__init__.py").write_text("")
        (src / "prompt_constructor_toml.py").write_text(_CONSTRUCTOR_TOML.replace("{up}", ".."))
    elif layout == "package":
        (src / "kernelbench").mkdir()
        (src / "kernelbench" / "__init__.py").write_text("")
        (src / "kernelbench" / "prompt_constructor_toml.py").write_text(_CONSTRUCTOR_TOML.replace("{up}", "../.."))
    elif layout == "old":
        (src / "__init__.py").write_text("")
        (src / "prompt_constructor_multilang.py").write_text(_CONSTRUCTOR_OLD)
    elif layout == "multilang":
        (src / "__init__.py").write_text(_PACKAGE_INIT)
        (src / "helpers.py").write_text(_HELPERS)
        (src / "prompt_constructor_multilang.py").write_text(_CONSTRUCTOR_MULTILANG)
    else:
        raise ValueError(layout)
    return root


# Answers, as a model would write them (prose around a fenced block).
TRITON_SCALE = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_kernel(x_ptr, out_ptr, n, scale, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x * scale + shift, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        affine_kernel[(triton.cdiv(n, 1024),)](x, out, n, {scale}, {shift}, BLOCK=1024)
        return out
'''


def answer(code: str) -> str:
    return f"Here is the kernel.\n\n```python\n{code}```\n\nIt fuses the work into one launch.\n"


def triton_affine(scale: float, shift: float) -> str:
    return TRITON_SCALE.replace("{scale}", repr(scale)).replace("{shift}", repr(shift))
