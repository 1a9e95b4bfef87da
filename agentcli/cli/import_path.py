"""Code a repository planted never runs: `python -m agentcli` and `PYTHONPATH=.` put the
working directory on sys.path, and from there a planted module would shadow one agentcli
imports later (lazily: `jsonschema`, `httpx`), and a planted `*.dist-info` would register a
plug-in — imported with the user's keys in the environment, outside any sandbox. So at
start, sys.path loses every entry in the working directory (but the one agentcli itself is
imported from), unless the user trusts that workspace (`agentcli trust`)."""

from __future__ import annotations

import os
import sys


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def planted_entries(cwd: str, path: list[str], own: str, pythonpath: str = "") -> list[str]:
    """The entries of `path` that are the working directory, or inside it and put there by
    PYTHONPATH (`own`: where agentcli itself was imported from, which stays). Installed
    locations stay even when the working directory holds them (a venv in the home)."""
    added = {os.path.realpath(p) for p in pythonpath.split(os.pathsep) if p}
    found = []
    for entry in path:
        real = os.path.realpath(entry or cwd)
        planted = real == cwd or (real in added and _within(real, cwd))
        if planted and not _within(own, real):
            found.append(entry)
    return found


def drop_planted_entries() -> None:
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:
        return
    own = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    planted = planted_entries(cwd, sys.path, own, os.environ.get("PYTHONPATH", ""))
    if not planted:
        return
    from pathlib import Path

    from agentcli.config.trust import is_trusted

    if is_trusted(Path(cwd)):
        return
    sys.path[:] = [entry for entry in sys.path if entry not in planted]
