"""gemm_epilogue family: linear + ReLU or GELU with scaling and a residual, small and epilogue stages.

y = act(x @ W^T + b) * scaling + residual, W and b from nn.Linear, scaling a constructor argument.
The full/small answer is one pure Triton kernel (GEMM with the tail fused before the store); the
epilogue answer keeps the GEMM as one library call and writes the tail in Triton. Both answers and
the reference are shared by the two operations, which differ in the activation (slots).
Wrong answers are the fused kernel with the tail a model gets subtly wrong: ReLU's scales the
residual too, GELU's scales before the activation instead of after. Shapes as matmul's (`gemm_dims`).
"""

from __future__ import annotations

import random
from pathlib import Path

from kgym.tasks.families.matmul import gemm_dims, int32_indexable
from kgym.tasks.operation import Operation
from kgym.tasks.shapes import Budget

HERE = Path(__file__).parent
GELU = "0.5 * {v} * (1.0 + tl.erf({v} * 0.7071067811865476))"  # exact GELU, the erf form


def shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    M, N, K = gemm_dims(rng, budget)
    return {"batch_size": M, "in_features": K, "out_features": N}


def check(s: dict[str, int]) -> str | None:
    M, K, N = s["batch_size"], s["in_features"], s["out_features"]
    return int32_indexable(x=M * K, weight=N * K, y=M * N)


def _op(name: str, act_name: str, torch_act: str, act: str, scaling: str, wrong_tail: str) -> Operation:
    formula = f"{act_name.lower()}(x @ W^T + b) * scaling + residual"
    return Operation(
        name=name, family="gemm_epilogue", folder=HERE, description=f"y = {formula}, scaling = {scaling}",
        reference="reference.py", solution="solution.py", epilogue="epilogue.py", wrong="solution.py",
        shapes=shapes, check=check, stages=("full", "small", "epilogue"),
        slots={"act_name": act_name, "formula": formula, "torch_act": torch_act, "scaling": scaling,
               "name": name, "tail": f"{act} * scaling + r"},
        wrong_slots={"tail": wrong_tail})


OPERATIONS = [
    _op("linear_relu_residual", "ReLU", "torch.relu", "tl.maximum(z, 0.0)", "0.5",
        wrong_tail="(tl.maximum(z, 0.0) + r) * scaling"),  # the residual scaled with the activation
    _op("linear_gelu_residual", "GELU", "torch.nn.functional.gelu", GELU.format(v="z"), "1.5",
        wrong_tail=GELU.format(v="(z * scaling)") + " + r"),  # scaled before the activation, not after
]
