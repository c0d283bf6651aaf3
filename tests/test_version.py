"""VERIFIER_VERSION follows kgym/verify's sources: a verdict-changing commit cannot keep a stale
version (it is part of every evaluation id, so stale verdicts would be reused)."""

from pathlib import Path

from kgym.contract.version import VERIFIER_SOURCE_FINGERPRINT, VERIFIER_VERSION, source_fingerprint

HOW = ('kgym/verify changed: bump VERIFIER_VERSION in kgym/contract/version.py (say in its comment what '
       'changed in the verdicts) and set VERIFIER_SOURCE_FINGERPRINT = "{fp}" beside it. Only a change '
       'that provably changes no verdict may update the fingerprint alone (say so in the commit message).')


def test_the_version_was_set_for_the_current_sources():
    fp = source_fingerprint()
    assert fp == VERIFIER_SOURCE_FINGERPRINT, HOW.format(fp=fp)
    assert VERIFIER_VERSION.startswith("kgym-verify-")


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_code_changes_move_the_fingerprint_comments_do_not(tmp_path):
    base = source_fingerprint(_package(tmp_path / "a", {"m.py": 'TOL = 1e-4\ns = "# not a comment"\n'}))
    # comments, blank lines and trailing spaces: no verdict can change
    same = source_fingerprint(_package(tmp_path / "b", {"m.py": '# why\nTOL = 1e-4  # KernelBench\n\n'
                                                                's = "# not a comment"   \n'}))
    assert same == base
    changed = {
        "value": {"m.py": 'TOL = 1e-3\ns = "# not a comment"\n'},
        "string with a hash": {"m.py": 'TOL = 1e-4\ns = "# not a comment!"\n'},
        "file added": {"m.py": 'TOL = 1e-4\ns = "# not a comment"\n', "n.py": "X = 1\n"},
        "file renamed": {"k.py": 'TOL = 1e-4\ns = "# not a comment"\n'},
        "subpackage file": {"m.py": 'TOL = 1e-4\ns = "# not a comment"\n', "sub/n.py": ""},
    }
    for why, files in changed.items():
        assert source_fingerprint(_package(tmp_path / why.replace(" ", "_"), files)) != base, why
