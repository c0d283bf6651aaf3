"""A small synthetic KernelBook file whose every row has a known destination in the funnel.

Built from the project's sample (kgym/tasks/families/kernelbook/sample.jsonl) plus a hybrid module
written here, and, when a KernelBench checkout is at hand, one row whose module is a level-1 problem
verbatim. `EXPECTED` maps each row's uuid to where it must land (None: kept in the dataset).
Verifications: good-1, good-2, hybrid, wrong, long (five, on tiny shapes).
"""

from __future__ import annotations

import json
from pathlib import Path

from kgym.curation.funnel_names import Drop
from kgym.tasks.families.kernelbook.dataset import SAMPLE

from paths import shared_kernelbench

KERNELBENCH = shared_kernelbench() / "KernelBench"
KB_PROBLEM = KERNELBENCH / "level1" / "19_ReLU.py"

HYBRID_MODULE = '''import torch
import torch.nn as nn


class LinearReLU(nn.Module):
    def __init__(self, in_features=16, out_features=32):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.rand([4, 16])]


def get_init_inputs():
    return [[], {'in_features': 16, 'out_features': 32}]
'''

HYBRID_ANSWER = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class LinearReLUNew(nn.Module):
    def __init__(self, in_features=16, out_features=32):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        # The one library call (a GEMM) stays; the ReLU runs in Triton.
        y = self.linear(x).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](y, out, n, BLOCK=1024)
        return out
'''

BROKEN_MODULE = '''import torch
import torch.nn as nn


class Broken(nn.Module):
    def forward(self, x):
        raise ValueError("this module never ran")


def get_inputs():
    return [torch.rand([4, 4])]


def get_init_inputs():
    return [[], {}]
'''

# Where each row must land (None: in the dataset). "contaminated" is present only with a checkout.
EXPECTED: dict[str, Drop | None] = {
    "good-1": None, "duplicate": Drop.DUPLICATE, "good-2": None, "over-cap": Drop.OVER_CAP,
    "contaminated": Drop.CONTAMINATED, "hybrid": None, "wrong": Drop.FAILED, "long": Drop.TOO_LONG,
    "no-answer": Drop.NO_ANSWER, "broken": Drop.NOT_NORMALISED,
}


def _sample() -> dict[str, dict]:
    return {r["entry_point"]: r for r in map(json.loads, SAMPLE.read_text().splitlines())}


def rows(with_kernelbench: bool) -> list[dict]:
    s = _sample()
    tanh, l2, clip = s["ScaledTanh"], s["RowL2Normalize"], s["ClippedSquaredError"]

    def row(uuid: str, base: dict, python_code: str | None = None, triton_code: str | None = "same",
            entry_point: str | None = None) -> dict:
        return {"uuid": uuid, "entry_point": entry_point or base["entry_point"], "repo_name": "kgym/synthetic",
                "python_code": python_code or base["python_code"],
                "triton_code": base["triton_code"] if triton_code == "same" else triton_code}

    out = [
        row("good-1", tanh),
        # The same answer again, reformatted and commented: one module, one answer (by AST).
        row("duplicate", tanh, python_code=tanh["python_code"] + "\n# copied from another repository\n",
            triton_code=tanh["triton_code"].replace("    x = x.contiguous()\n", "    x = x.contiguous()  # dense\n")),
        row("good-2", tanh, triton_code=tanh["triton_code"].replace("1024", "512")),
        row("over-cap", tanh, triton_code=tanh["triton_code"].replace("1024", "256")),
    ]
    if with_kernelbench:
        out.append(row("contaminated", tanh, python_code=KB_PROBLEM.read_text(), entry_point="Model",
                       triton_code="# never run: the module is a KernelBench problem\n"))
    long_answer = "".join(f"# padding line {i}: an answer far longer than the token limit allows\n"
                          for i in range(600)) + clip["triton_code"]
    out += [
        row("hybrid", tanh, python_code=HYBRID_MODULE, triton_code=HYBRID_ANSWER, entry_point="LinearReLU"),
        row("wrong", l2, triton_code=l2["wrong_triton_code"]),
        row("long", clip, triton_code=long_answer),
        row("no-answer", clip, python_code=clip["python_code"].replace("ClippedSquaredError", "Clipped2"),
            triton_code=None, entry_point="Clipped2"),
        row("broken", tanh, python_code=BROKEN_MODULE, triton_code="# never run\n", entry_point="Broken"),
    ]
    return out


def write(path: Path, with_kernelbench: bool) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows(with_kernelbench)))
    return path
