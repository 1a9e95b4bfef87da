"""What a repository makes a git command run, for deny rules: the programs its
configuration names (`core.fsmonitor`, pagers, diff drivers, filters, and for commands
that change the repository also editors, ssh, credential helpers, merge drivers, gpg), as
command lines a deny rule can match (`core.fsmonitor = rm -rf x` is `rm -rf x`), and the
hooks it may run, which no rule can read. Pagers are left out: git starts one only on a
terminal.

agentcli.policy.git_config reads the files as git does; this module only asks it which
entries and hooks matter to a subcommand."""

from __future__ import annotations

import os
import re
from pathlib import Path

from agentcli.policy.git_config import (
    INDEX_WRITERS,
    config_files,
    find_repository,
    git_dirs,
    hooks_dir,
    program_entries,
    read_config,
    shows_contents,
)
from agentcli.records import dataclass, field

# Keys that name a program commands that change the repository (or reach a remote) run.
_WRITER_KEYS = re.compile(
    r"^(core\.(sshcommand|editor|askpass|hookspath)|sequence\.editor|gpg(\.[^.]+)?\.program"
    r"|credential(\..+)?\.helper|merge\..+\.driver|(diff|merge)tool\..+\.cmd"
    r"|remote\..+\.(receivepack|uploadpack)|uploadpack\.packobjectshook"
    r"|(man|browser)\..+\.(cmd|path))$"  # git help's viewers
)
_GPG_PROGRAMS = ("gpg.program", "gpg.openpgp.program", "gpg.ssh.program", "gpg.x509.program")
EXT = "ext::"  # a remote URL that is a command line git runs (protocol.ext.allow)


@dataclass(slots=True)
class RepositoryRuns:
    commands: list[str] = field(default_factory=list)  # command lines its settings name
    hidden: str | None = None  # why it may also run what no rule can read (a hook)


def repository_runs(cwd: Path, subcommand: str, args: list[str], reads: bool) -> RepositoryRuns:
    """What `git SUBCOMMAND ARGS` run in `cwd` runs because of its repository; `reads`:
    the command only reads (agentcli.policy.readonly says so), so it runs no hook but
    the index's and only the programs that matter to it."""
    found = RepositoryRuns()
    repository = find_repository(cwd)
    if repository is None:
        return found
    for directory, work_tree in git_dirs(repository):
        entries = [e for config in config_files(directory) for e in read_config(config)]
        named = program_entries(
            entries, subcommand if reads else None, shows_contents(subcommand, args)
        )
        for entry in named:
            if entry.key == "log.showsignature":  # it names no program: gpg checks them
                found.commands.extend(_signature_programs(entries))
            elif not _pager(entry.key):
                found.commands.append(_command(entry.value or ""))
        if not reads:
            found.commands.extend(
                _command(e.value) for e in entries if e.value and _WRITER_KEYS.match(e.key)
            )
            found.commands.extend(_ext_commands(entries, args))
        found.hidden = found.hidden or _hook(directory, work_tree, entries, subcommand, reads)
    return found


def _signature_programs(entries: list) -> list[str]:
    """What git runs to check signatures: the programs the configuration names, or gpg."""
    named = [e.value for e in entries if e.key in _GPG_PROGRAMS and (e.value or "").strip()]
    return [_command(value) for value in named] or ["gpg"]


def _ext_commands(entries: list, args: list[str]) -> list[str]:
    """The command lines of `ext::` URLs (git runs them as the transport): a remote's URL
    in the configuration, a URL an `insteadOf` rewrites to, or one on the command line."""
    rewrites = [e.key[4:].rsplit(".", 1)[0] for e in entries if e.key.startswith("url.")]
    urls = [e.value or "" for e in entries] + rewrites + list(args)
    return [_ext_command(url) for url in urls if url.lower().startswith(EXT)]


def _ext_command(url: str) -> str:
    """git's `ext::` syntax: `% ` is a space, `%%` a percent sign."""
    return url[len(EXT) :].replace("%%", "\0").replace("% ", " ").replace("\0", "%")


def _pager(key: str) -> bool:
    """git starts a pager only on a terminal, which run_shell never gives (and a program
    that would give one, `script` or `tmux`, counts as running every program)."""
    return key == "core.pager" or key.startswith("pager.")


def _command(value: str) -> str:
    """git runs `!cmd` (aliases, credential helpers) and values with spaces by the shell."""
    return value.removeprefix("!")


def _hook(
    directory: Path, work_tree: Path | None, entries: list, subcommand: str, reads: bool
) -> str | None:
    if reads and subcommand not in INDEX_WRITERS:
        return None
    hooks = hooks_dir(directory, work_tree, entries)
    names = ["post-index-change"] if reads else _names(hooks)
    for name in names:
        hook = hooks / name
        if hook.is_file() and os.access(hook, os.X_OK):
            return f"`git {subcommand}` may run the repository's hooks ({name}), no rule reads"
    configured = any(e.key == "core.hookspath" and e.value for e in entries)
    if configured and not reads:
        return f"`git {subcommand}` may run hooks from core.hooksPath ({hooks}), which can change"
    return None


def _names(hooks: Path) -> list[str]:
    try:
        return sorted(n for n in os.listdir(hooks) if not n.endswith(".sample"))[:100]
    except OSError:
        return []
