"""Every user error of issue 31 is one line on stderr naming the setting, and exit status 2, found before
Ray starts or anything is downloaded (an unwritable records.out was an ActorDiedError after 32 s, a
missing model 87 lines after 48 s; a negative --timeout was the candidate's TIMEOUT). And a reader
that closes the pipe (`| head`) ends a command quietly.

The commands run in this process (their `main(argv)`), so a case costs no interpreter start; the
pipe cases need a real pipe and run as subprocesses.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("user-errors")
    (tmp / "a_file").write_text("not a directory")
    (tmp / "no_config").mkdir()
    model = tmp / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "qwen2"}))
    (tmp / "data.parquet").write_text("")  # exists; never read (the model check fails first)
    return {"FILE": str(tmp / "a_file"), "NOCONFIG": str(tmp / "no_config"), "MODEL": str(model),
            "DATA": str(tmp / "data.parquet"), "MISSING": str(tmp / "missing")}


# (command, argv with {PLACEHOLDERS} from `paths`, the setting the one line must name)
CASES = [
    ("kgym", ["verify", "--example", "relu", "--runs", "-5"], "--runs -5"),
    ("kgym", ["verify", "--example", "relu", "--runs", "0"], "--runs 0"),
    ("kgym", ["verify", "--example", "relu", "--timeout", "-1"], "--timeout -1"),
    ("kgym", ["verify", "--example", "relu", "--metrics-port", "70000"], "--metrics-port"),
    ("kgym", ["demo", "--out", "{FILE}/records"], "records.out"),
    ("kgym", ["demo", "--out", "{FILE}"], "records.out"),
    ("jobs.demo", ["--out", "{FILE}/records"], "records.out"),
    ("jobs.verify", ["--config", "jobs/configs/example.toml", "--set", "records.out={FILE}/records"], "records.out"),
    ("jobs.verify", ["--config", "jobs/configs/example.toml", "--set", "verify.timed_runs=0"], "timed_runs"),
    ("jobs.verify", ["--config", "jobs/configs/example.toml", "--set", "verify.timeout_s=-1"], "timeout_s"),
    ("jobs.sft", ["--config", "jobs/configs/sft.toml", "--set", "dataset={MISSING}.parquet",
                  "--set", "model={MODEL}"], "dataset"),
    ("jobs.sft", ["--config", "jobs/configs/sft.toml", "--set", "dataset={DATA}",
                  "--set", "model=kgym-tests/no-such-model"], "model"),  # a hub id not in the cache
    ("jobs.sft", ["--config", "jobs/configs/sft.toml", "--set", "dataset={DATA}", "--set", "model={MISSING}"],
     "model"),
    ("jobs.sft", ["--config", "jobs/configs/sft.toml", "--set", "dataset={DATA}", "--set", "model={MODEL}",
                  "--set", "out={FILE}/sft"], "out"),
    ("jobs.rl", ["--config", "jobs/configs/rl_tiny.toml", "--set", "model={MISSING}"], "model"),
    ("jobs.rl", ["--config", "jobs/configs/rl_tiny.toml", "--set", "model={NOCONFIG}"], "model"),
    ("jobs.rl", ["--config", "jobs/configs/rl_tiny.toml", "--set", "model={MODEL}",
                 "--set", "sft_adapter={MISSING}"], "sft_adapter"),
    ("jobs.rl", ["--config", "jobs/configs/rl_tiny.toml", "--set", "model={MODEL}",
                 "--set", "records.out={FILE}/rl"], "records.out"),
    ("jobs.rl", ["--config", "jobs/configs/rl_tiny.toml", "--set", "model={MODEL}",
                 "--set", "checkpoint.dir={FILE}/ckpt"], "checkpoint.dir"),
    ("jobs.rl", ["--config", "jobs/configs/rl_tiny.toml", "--set", "model={MODEL}", "--set", "steps=\"three\""],
     "--set steps="),
    ("jobs.verify", ["--config", "jobs/configs/example.toml", "--set", "farm.workers=0"], "--set farm.workers=0"),
]


def _main(command: str):
    module = importlib.import_module("kgym.cli" if command == "kgym" else command)
    return module.main


@pytest.mark.parametrize("command,argv,setting", CASES, ids=[f"{c} {' '.join(a[-2:])}" for c, a, _ in CASES])
def test_a_user_error_is_one_line_and_exit_2(command, argv, setting, paths, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    argv = [a.format(**paths) for a in argv]
    status = _main(command)(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2, err
    assert len(err) == 1, err
    prog = "kgym " + argv[0] if command == "kgym" else command
    assert err[0].startswith(f"{prog}: error: "), err[0]
    assert setting in err[0], err[0]
    import ray

    assert not ray.is_initialized()  # refused before Ray started


PIPED = [
    [sys.executable, "-m", "kgym.cli", "tasks", "list"],
    [sys.executable, "-m", "jobs.eval", "--help-config"],
]


@pytest.mark.parametrize("cmd", PIPED, ids=lambda c: " ".join(c[2:]))
def test_a_closed_pipe_ends_quietly(cmd):
    """`CMD | head`: no BrokenPipeError traceback, status 141 (128 + SIGPIPE, what `yes | head` gives).
    The reader closes the pipe before the command has written anything (it is still importing), so
    its first write meets a closed pipe every time, whatever the size of its output."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    proc.stdout.close()  # the reader leaves, as `head` does
    err = proc.stderr.read().decode()
    status = proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert status == 141, (status, err)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_wait_is_not_silence():
    """`kgym verify` on a hung candidate waits up to --timeout: a terminal gets a line while it waits
    (issue 31: two minutes of nothing), a pipe or log gets none."""
    from kgym.cli import waiting_notice

    term, pipe = _Terminal(), io.StringIO()
    with waiting_notice(120, stream=term, first_s=0.05, every_s=0.05):
        time.sleep(0.3)
    with waiting_notice(120, stream=pipe, first_s=0.05, every_s=0.05):
        time.sleep(0.2)
    lines = term.getvalue().splitlines()
    assert lines and all("still verifying" in line and "--timeout 120" in line for line in lines), lines
    assert pipe.getvalue() == ""
    n = len(lines)
    time.sleep(0.2)
    assert len(term.getvalue().splitlines()) == n  # stopped with the block
