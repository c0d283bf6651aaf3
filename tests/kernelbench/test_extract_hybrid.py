"""Answers in: JSONL generations, code extraction (last closed python fence), and the static
"keeps a PyTorch op" classification."""

from __future__ import annotations

import json

import pytest

from kgym.kernelbench import Checkout, KernelBenchError, keeps_torch_op, read_generations
from kgym.kernelbench.plan import make_plan

from kb_fake import answer, triton_affine


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_generations_and_plan(checkout_dir, tmp_path):
    code = triton_affine(3.0, 0.0)
    rows = [{"level": 1, "problem_id": 1, "model": "m", "answer": "draft\n```python\nx = 1\n```\n" + answer(code)},
            {"level": 1, "problem_id": 2, "model": "m", "text": "I cannot do that."},
            {"level": 2, "problem_id": 1, "model": "m", "answer": "```python\nimport torch\n"}]  # truncated
    gens = read_generations(_write(tmp_path / "g.jsonl", rows))
    plan = make_plan(Checkout(checkout_dir), gens)
    assert plan.problems == 3
    assert len(plan.items) == 1 and plan.items[0].candidate == code  # the last closed fence
    assert plan.items[0].overrides == {"hybrid": False}
    assert plan.items[0].task["model"] == "m" and plan.items[0].task["family"] == "kernelbench"
    assert [r["gate"] for r in plan.unanswered] == ["compile", "compile"]
    assert "no code to verify" in plan.unanswered[1]["reason"] and "unclosed" in plan.unanswered[1]["reason"]


def test_bad_generations(checkout_dir, tmp_path):
    with pytest.raises(KernelBenchError, match="missing"):
        read_generations(_write(tmp_path / "a.jsonl", [{"level": 1, "answer": "x"}]))
    with pytest.raises(KernelBenchError, match="given twice"):
        read_generations(_write(tmp_path / "b.jsonl", [{"level": 1, "problem_id": 1, "model": "m", "answer": "x"}] * 2))
    gens = read_generations(_write(tmp_path / "c.jsonl", [{"level": 1, "problem_id": 9, "model": "m", "answer": "x"}]))
    with pytest.raises(KernelBenchError, match="has no problem 9"):
        make_plan(Checkout(checkout_dir), gens)


PURE = triton_affine(2.0, 1.0)


@pytest.mark.parametrize("source,keeps", [
    (PURE, False),
    (PURE.replace("return out", "return torch.relu(out)"), True),                 # torch op
    (PURE.replace("return out", "return F.gelu(out)"), True),                     # functional op
    (PURE.replace("return out", "return out + x"), True),                         # arithmetic on an input
    (PURE.replace("x = x.contiguous()", "x = x.contiguous().exp()"), True),       # tensor math method
    (PURE.replace("return out", "return out.view(-1).reshape(x.shape)"), False),  # views are not compute
    (PURE.replace("return out", "return out.movedim(-1, 0).movedim(0, -1)"), False),  # nor moved axes
    (PURE.replace("super().__init__()", "super().__init__()\n        self.fc = nn.Linear(4, 4)")
         .replace("return out", "return self.fc(out)"), True),                    # a torch layer of the module
    (PURE.replace("        x = x.contiguous()\n", "        x = helper(x)\n")
     + "\n\ndef helper(t):\n    return torch.sigmoid(t)\n", True),                # followed into a helper
    (PURE.replace("n = x.numel()", "n = x.numel()\n        blocks = (n + 1023) // 1024"), False),  # size math
    ("def broken(:\n", False),
])
def test_keeps_torch_op(source, keeps):
    assert keeps_torch_op(source) is keeps
