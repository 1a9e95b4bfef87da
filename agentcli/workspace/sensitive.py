"""Paths that are dangerous to touch even inside the workspace: what runs code later
(git hooks, shell start-up files), what configures git or agentcli itself, credentials."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from agentcli.paths import config_dir

SHELL_STARTUP_FILES = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
        ".cshrc",
        ".tcshrc",
        ".kshrc",
        ".inputrc",
        "config.fish",
    }
)


def _is_under(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def _is_env_file(name: str) -> bool:
    return name == ".env" or name.startswith(".env.") or name.endswith(".env")


def _git_reason(rest: tuple[str, ...]) -> str | None:
    """Why a path below a `.git` directory (`rest`: the parts after it) is where git reads
    code or configuration from: hooks and config, a submodule's own (modules/NAME/...,
    nested too) and a worktree's config.worktree."""
    while rest[:1] in (("modules",), ("worktrees",)) and len(rest) > 2:
        rest = rest[2:]  # modules/NAME/... holds a submodule's git directory
    if rest[:1] == ("hooks",):
        return "files in .git/hooks run as code on git commands"
    if rest in (("config",), ("config.worktree",)):
        return (
            "git configuration (.git/config, a submodule's or worktree's) can make git run commands"
        )
    return None


@functools.lru_cache(maxsize=16)
def _real(path: str) -> str:
    """realpath of the home and configuration directories, asked for on every file call."""
    return os.path.realpath(path)


@functools.lru_cache(maxsize=64)
def _folds_case(directory: str) -> bool:
    """Whether the file system holding `directory` ignores case (macOS and Windows by
    default): the name with its case swapped reaches the same file."""
    path = Path(directory)
    for candidate in (path, *path.parents):
        name = candidate.name
        if name.swapcase() == name:
            continue  # no letters: look higher up
        try:
            there = os.stat(candidate)
            swapped = os.stat(candidate.with_name(name.swapcase()))
        except OSError:
            return False
        return os.path.samestat(there, swapped)
    return False


def _existing_dir(path: Path) -> str:
    for candidate in (path.parent, *path.parent.parents):
        if candidate.is_dir():
            return str(candidate)
    return path.anchor


def folds_case_at(path: Path) -> bool:
    """Whether names at `path` (which need not exist yet) are compared ignoring case."""
    return _folds_case(_existing_dir(path))


# Files whose contents are secrets wherever they are: reading one sends it to the model's
# provider. By whole name, then by ending.
SECRET_NAMES = frozenset(
    {
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_ecdsa_sk",
        "id_ed25519_sk",
        ".netrc",
        "_netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".pgpass",
        ".htpasswd",
        "credentials",
        "credentials.json",
        "credentials.yml",
        "credentials.yaml",
        "secrets.json",
        "secrets.yml",
        "secrets.yaml",
        "secrets.toml",
        ".dockercfg",
        "kubeconfig",
        "service-account.json",
    }
)
SECRET_ENDINGS = (
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".jks",
    ".keystore",
    ".kdbx",
    ".ppk",
    ".gpg",
    ".age",
    ".secret",
    ".secrets",
)


def read_secret_reason(path: Path) -> str | None:
    """Why reading `path` may send a secret to the model's provider, or None."""
    parts = path.parts
    name = parts[-1].casefold() if parts else ""
    if _is_env_file(name):
        return f"{path.name} holds environment secrets"
    if name in SECRET_NAMES or name.endswith(SECRET_ENDINGS):
        return f"{path.name} is a key or credential file"
    for i, part in enumerate(parts[:-1]):
        if part == ".git" and _git_reason(parts[i + 1 :]) and "hooks" not in parts[i + 1 :]:
            return "git configuration can hold credentials (CI checkouts keep a token there)"
    return None


def sensitive_reason(path: Path, *, writing: bool) -> str | None:
    """Why touching `path` (absolute, resolved) is high risk, or None when it is not.
    Names are compared case-insensitively where the file system is."""
    home = Path(_real(os.path.expanduser("~")))
    if _is_under(path, home / ".ssh"):
        return "~/.ssh holds keys and SSH configuration"
    if not writing:
        return read_secret_reason(path)
    fold = folds_case_at(path)
    parts = tuple(p.casefold() for p in path.parts) if fold else path.parts
    name = parts[-1] if parts else ""
    for i, part in enumerate(parts[:-1]):
        if part == ".git":
            reason = _git_reason(parts[i + 1 :])
            if reason:
                return reason
    if name == ".git":
        return "a .git file or directory decides where git reads its configuration from"
    if name in SHELL_STARTUP_FILES:
        return f"{path.name} is a shell start-up file that runs on every new shell"
    if ".agentcli" in parts[:-1] or _is_under(path, Path(_real(str(config_dir())))):
        return "agentcli's own configuration decides what agentcli may do"
    if _is_env_file(name):
        return f"{path.name} holds environment secrets"
    return None
