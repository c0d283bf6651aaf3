"""The commands README and docs/ give stay true (issue 31: several failed as written): every `kgym ...`,
`python -m jobs.NAME ...` and `python benchmarks|examples/X.py` line of their bash blocks names a
command that exists and flags it takes; a job's `--config FILE` exists and loads with the line's
`--set` overrides (keys and values checked); the cheap ones run for real (`kgym tasks list|show`,
`--help-config`). Optional parts written `[...]` are dropped; placeholders (DIR, REF.py) are taken as
they are, since parsing never opens them. Running the jobs themselves is for their own tests.
"""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CONFIGS = {"jobs.verify": ("jobs.verify_config", "VerifyJobConfig"), "jobs.rl": ("jobs.rl_config", "RLJobConfig"),
           "jobs.sft": ("jobs.sft", "SFTJobConfig"), "jobs.eval": ("jobs.eval", "EvalJobConfig"),
           "jobs.curate": ("jobs.curate", "CurateJobConfig"), "jobs.demo": ("jobs.demo", "DemoConfig")}
RUN_FOR_REAL = (("kgym", "tasks", "list"), ("kgym", "tasks", "show"))
COMMAND = re.compile(r"^(kgym |python -m jobs\.|python (benchmarks|examples)/)")


def documented_commands() -> list[tuple[str, str]]:
    """(page, command) for each command of the pages' bash blocks, continuation lines joined and
    `a && b` split; comments and optional `[...]` parts dropped."""
    out = []
    for page in PAGES:
        for block in re.findall(r"```(?:bash|sh)\n(.*?)```", page.read_text(), flags=re.S):
            block = re.sub(r"\\\n\s*", " ", block)
            for line in block.splitlines():
                line = re.sub(r"\s+#.*$", "", line).strip()
                for part in re.split(r"&&|;", line):
                    part = re.sub(r"\[[^\]]*\]", "", part).strip()
                    if COMMAND.match(part):
                        out.append((page.name, part))
    return out


COMMANDS = documented_commands()


def test_the_pages_have_commands():
    assert len(COMMANDS) > 25, COMMANDS


def _sets(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]


def _config(argv: list[str]) -> str | None:
    return argv[argv.index("--config") + 1] if "--config" in argv else None


@pytest.mark.parametrize("page,command", COMMANDS, ids=[f"{p}: {c[:60]}" for p, c in COMMANDS])
def test_a_documented_command_parses(page, command, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    argv = shlex.split(command)
    if argv[0] == "python" and argv[1] != "-m":
        assert (ROOT / argv[1]).is_file(), f"{page}: {argv[1]} does not exist"
        return
    if argv[0] == "kgym":
        from kgym.cli import build_parser, main

        if tuple(argv[:3]) in RUN_FOR_REAL:
            assert main(argv[1:]) == 0, capsys.readouterr().err
            return
        if argv[1:3] != ["eval", "run"]:
            build_parser().parse_args(argv[1:])  # exits 2 (SystemExit) on a flag it does not take
            return
        argv = ["python", "-m", "jobs.eval", *argv[3:]]
    module = argv[2]
    rest = argv[3:]
    main = importlib.import_module(module).main
    if module == "jobs.tiny_model":
        with pytest.raises(SystemExit) as e:
            main(["--help"])
        assert e.value.code == 0
        return
    # every flag of the line is one the job takes (argparse checks them before --help-config returns)
    assert main([*rest, "--help-config"]) == 0, capsys.readouterr().err
    config = _config(rest)
    if config is not None:
        assert (ROOT / config).is_file(), f"{page}: {config} does not exist"
        from jobs.sections import load_job_config

        mod, name = CONFIGS[module]
        cls = getattr(importlib.import_module(mod), name)
        # the file and the line's overrides load; `model` and the like are placeholders, so not checked
        load_job_config(cls, config, _sets(rest))
