"""The command line every job shares: `python -m jobs.NAME [--config FILE] [--set KEY=VALUE ...]`.

`parser(name, doc, example)` makes the argument parser with the common flags (`--config`, `--set`,
`--help-config`); a job adds its own shortcut flags to it. `job_main(...)` parses, prints every config key
for `--help-config`, loads the config (the file, then the shortcuts, then `--set`: the last word
wins), checks what can be checked before Ray starts (`jobs.preflight`), runs the job with a flushing
log, and turns a bad-input error into one line on stderr and exit status 2; a reader that closes
the pipe ends it quietly (status 141). What a finished job's result means for the exit status is the
job's own `finish`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from jobs.preflight import check_records
from jobs.sections import ConfigError, describe, load_job_config
from kgym.cli_common import run_piped


def parser(name: str, doc: str | None, example: str) -> argparse.ArgumentParser:
    """`name` is the module's short name (verify, rl, ...); `example` a `--set` value for the help."""
    p = argparse.ArgumentParser(prog=f"python -m jobs.{name}", description=(doc or "").strip().splitlines()[0])
    p.add_argument("--config", help="TOML job config (every key: --help-config)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                   help=f"override a config key, dotted for sections, e.g. {example} (value: a TOML literal; "
                        "repeatable; wins over the file and the flags)")
    p.add_argument("--help-config", action="store_true", help="print every config key with its default and exit")
    return p


def toml_string(value: str) -> str:
    """`value` as a TOML string literal for an override (a JSON string is a TOML basic string)."""
    return json.dumps(value)


def job_main(p: argparse.ArgumentParser, config_type: type, run: Callable[..., Any], argv: Sequence[str] | None, *,
         shortcuts: Callable[[argparse.Namespace], list[str]] | None = None,
         errors: tuple[type[BaseException], ...] = (),
         finish: Callable[[Any], int] | None = None,
         preflight: Callable[[Any], None] | None = None) -> int:
    """Parse `argv`, load a `config_type`, call `run(config, log=...)`; returns the exit status.
    `shortcuts` turns the job's own flags into overrides; `errors` are the job's bad-input errors
    besides `ConfigError` (exit 2, one line); `finish` maps the job's result to the status (0).
    Before `run`, a config with a [records] section has its `records.out` checked (writable), then
    `preflight(config)` checks the job's own inputs (`jobs.preflight`): both before Ray or a download.
    A reader that closes the pipe (`--help-config | head`) ends the job quietly (`run_piped`)."""
    return run_piped(lambda: _job_main(p, config_type, run, argv, shortcuts, errors, finish, preflight))


def _job_main(p, config_type, run, argv, shortcuts, errors, finish, preflight) -> int:
    args = p.parse_args(argv)
    if args.help_config:
        print(describe(config_type))
        return 0
    overrides = [*(shortcuts(args) if shortcuts else []), *args.overrides]
    try:
        config = load_job_config(config_type, args.config, overrides)
        check_records(config)
        if preflight is not None:
            preflight(config)
        result = run(config, log=lambda s: print(s, flush=True))
    except (ConfigError, *errors) as e:
        print(f"{p.prog.removeprefix('python -m ')}: error: {e}", file=sys.stderr)
        return 2
    return finish(result) if finish else 0
