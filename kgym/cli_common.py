"""What the `kgym` command and its subcommand modules share: the usage error (exit status 2) and the
quiet end of a command whose reader closed the pipe (`run_piped`; the jobs' entrypoints use it too).

Lives apart from `kgym.cli` so that the subcommand modules (`cli_tasks`, `cli_eval`) can raise it
without importing the command that imports them (that was an import cycle). Parses nothing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable


class UsageError(Exception):
    """Bad usage or unreadable/invalid input: `kgym` prints the message (naming the file and the
    problem) and exits with status 2. Not for failures of kgym itself (status 1)."""


SIGPIPE_STATUS = 141  # 128 + SIGPIPE: what a shell reports for `yes | head`, whose reader left early


def run_piped(main: Callable[[], int]) -> int:
    """`main()`'s exit status, and a reader that closed the pipe (`kgym tasks list | head`) ends the
    command quietly, as `yes | head` does: no BrokenPipeError traceback, status 141 (128 + SIGPIPE).
    stdout is flushed inside, so a pipe closed before the last buffered write is caught too; it is
    then pointed at /dev/null so that the interpreter's own flush at exit finds nothing to fail on."""
    try:
        status = main()
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return SIGPIPE_STATUS
