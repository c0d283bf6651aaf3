"""kgym.rl is pure tensor math: importing it (and the learner module, until a Learner is built) pulls
no Ray runtime, vLLM, transformers, peft or bitsandbytes."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("ray", "vllm", "transformers", "peft", "bitsandbytes", "trl", "kgym.episodes")


def loaded_after(statement: str) -> set[str]:
    code = (f"import sys\n{statement}\n"
            f"print(' '.join(sorted({{m.split('.')[0] if m.split('.')[0] != 'kgym' else m for m in sys.modules}})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    return set(out.stdout.split())


def test_kgym_rl_imports_torch_only():
    mods = loaded_after("import kgym.rl")
    assert "torch" in mods
    assert not [m for m in HEAVY if m in mods]


def test_learner_core_defers_the_model_stack():
    mods = loaded_after("import kgym.training.learner_core; import kgym.training.step_rules")
    # the library holds no Ray; the model stack waits for a Learner
    assert not [m for m in ("ray", "vllm", "transformers", "peft", "bitsandbytes", "trl") if m in mods]
