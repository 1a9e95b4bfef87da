"""What the CLI's subcommands do, kept out of cli.py so that it stays a thin layer."""

from __future__ import annotations

from pathlib import Path


def workspace_dir(cwd: str | None) -> Path:
    """The workspace a command works on: --cwd, or the current directory."""
    from agentcli.errors import UsageError

    path = Path(cwd or ".").expanduser().resolve()
    if not path.is_dir():
        raise UsageError(f"--cwd {str(path)!r} is not a directory")
    return path
