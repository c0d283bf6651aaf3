"""Code extraction: the rules of kgym.answers (no block, several blocks, truncation)."""

import subprocess
import sys

from kgym.answers import extract_code


def test_single_python_block():
    e = extract_code("Sure.\n```python\nx = 1\n```\nDone.")
    assert e.ok and e.code == "x = 1\n" and e.blocks == 1


def test_last_python_block_wins():
    text = "```python\nfirst = 1\n```\nBetter:\n```py\nsecond = 2\n```\nand\n```\nthird = 3\n```\n"
    e = extract_code(text)
    assert e.ok and e.code == "third = 3\n" and e.blocks == 3
    assert "last of 3" in e.reason


def test_other_languages_are_never_the_answer():
    e = extract_code("```python\nkeep = 1\n```\nrun it with\n```bash\npython x.py\n```\n")
    assert e.ok and e.code == "keep = 1\n"
    assert extract_code("```bash\nls\n```").kind == "no_block"


def test_no_block_or_empty():
    for text in (None, "", "just words, def f(): pass", "```python\n\n```"):
        e = extract_code(text)
        assert e.kind == "no_block" and e.code is None and not e.ok


def test_truncated_output_is_not_scored_even_after_a_closed_block():
    e = extract_code("```python\ndraft = 1\n```\nNow the final one:\n```python\nimport triton\ndef f(")
    assert e.kind == "truncated" and e.code is None and e.blocks == 1


def test_longer_fences_hold_inner_backticks():
    e = extract_code("````python\ns = '''\n```\n'''\n````\n")
    assert e.ok and e.code == "s = '''\n```\n'''\n"


def test_indented_fence_and_tag_case():
    e = extract_code("  ```Python\ny = 2\n  ```\n")
    assert e.ok and e.code == "y = 2\n"


def test_answers_import_neither_episodes_nor_torch():
    code = "import sys, kgym.answers; print(sorted(m for m in ('torch', 'kgym.episodes') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
