"""What the `kgym` command and its subcommand modules share: the usage error (exit status 2).

Lives apart from `kgym.cli` so that the subcommand modules (`cli_tasks`, `cli_eval`) can raise it
without importing the command that imports them (that was an import cycle). Parses nothing.
"""

from __future__ import annotations


class UsageError(Exception):
    """Bad usage or unreadable/invalid input: `kgym` prints the message (naming the file and the
    problem) and exits with status 2. Not for failures of kgym itself (status 1)."""
