"""Paths that are dangerous to touch even inside the workspace: what runs code later
(git hooks, shell start-up files), what configures git or agentcli itself, credentials."""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.paths import config_dir

SHELL_STARTUP_FILES = frozenset(
    {
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
        ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc",
        ".inputrc", "config.fish",
    }
)  # fmt: skip


def _is_under(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def _is_env_file(name: str) -> bool:
    return name == ".env" or name.startswith(".env.") or name.endswith(".env")


def sensitive_reason(path: Path, *, writing: bool) -> str | None:
    """Why touching `path` (absolute, resolved) is high risk, or None when it is not."""
    home = Path(os.path.realpath(os.path.expanduser("~")))
    if _is_under(path, home / ".ssh"):
        return "~/.ssh holds keys and SSH configuration"
    if not writing:
        return None
    parts = path.parts
    for i, part in enumerate(parts[:-1]):
        if part == ".git":
            rest = parts[i + 1 :]
            if rest[0] == "hooks":
                return "files in .git/hooks run as code on git commands"
            if rest == ("config",):
                return ".git/config can make git run commands"
    if path.name in SHELL_STARTUP_FILES:
        return f"{path.name} is a shell start-up file that runs on every new shell"
    if ".agentcli" in parts[:-1] or _is_under(path, Path(os.path.realpath(config_dir()))):
        return "agentcli's own configuration decides what agentcli may do"
    if _is_env_file(path.name):
        return f"{path.name} holds environment secrets"
    return None
