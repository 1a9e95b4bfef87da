"""A repository's own configuration can make "read-only" git run programs.

`git status` runs `core.fsmonitor`, `git diff` and `git log -p` run `diff.external` and
textconv drivers, any command that looks at the work tree may run a `filter.*.clean`
driver, and `include.path` pulls in more of the same from anywhere. A cloned or
downloaded repository (an untrusted workspace) can carry such a `.git/config`, so a git
command is read-only only when the configuration of the repository it would run in names
no program. The user's own global configuration is theirs and is not read here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# Keys (lower-case; `*` is one subsection) whose value is a program that git's read-only
# subcommands (status, log, diff, show, ...) may run, or a file of further configuration.
# Keys used only by commands that are never read-only here (credential helpers, hooks,
# editors, ssh, merge drivers, difftool) are left out: they would only make every
# `git status` ask in repositories that set them for good reasons (husky's hooksPath).
_PROGRAM_KEYS = tuple(
    re.compile(pattern.replace(".", r"\.").replace("*", r"[^\n]*") + "$")
    for pattern in (
        "core.fsmonitor",
        "core.pager",
        "pager.*",
        "diff.external",
        "diff.*.textconv",
        "diff.*.command",
        "filter.*.clean",
        "filter.*.smudge",
        "filter.*.process",
        "gpg.program",
        "gpg.*.program",
        "include.path",
        "includeif.*.path",
    )
)
# core.fsmonitor = true means git's own daemon, not a program of the repository's.
_BOOLEAN_FALSE_OR_BUILTIN = {"", "false", "no", "off", "0", "true", "yes", "on", "1"}
_SECTION = re.compile(r'\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_KEY = re.compile(r"([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


def repository_problem(cwd: Path) -> str | None:
    """Why git run in `cwd` may run a program the repository's configuration names, or
    None (also when `cwd` is in no repository)."""
    git_dir = find_git_dir(cwd)
    if git_dir is None:
        return None
    for config in config_files(git_dir):
        key = program_key(config)
        if key is not None:
            where = config.relative_to(git_dir) if config.is_relative_to(git_dir) else config
            return f"the repository's configuration ({where}) sets {key}: git would run it"
    return None


def find_git_dir(cwd: Path) -> Path | None:
    """The git directory git would use in `cwd`: the nearest `.git` directory or
    `gitdir:` file above it, or `cwd` itself when it is a bare repository."""
    here = Path(os.path.abspath(cwd))
    for directory in (here, *here.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            return _pointed_dir(dot_git)
        if (directory / "HEAD").is_file() and (directory / "objects").is_dir():
            return directory  # a bare repository (or inside a git directory)
    return None


def _pointed_dir(dot_git_file: Path) -> Path | None:
    try:
        text = dot_git_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.match(r"gitdir:\s*(.+)", text.strip())
    if match is None:
        return None
    return (dot_git_file.parent / match.group(1).strip()).resolve()


def config_files(git_dir: Path) -> list[Path]:
    """The repository's configuration files: its own, a worktree's, the common
    directory's of a linked worktree, and its submodules'."""
    files = [git_dir / "config", git_dir / "config.worktree"]
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        common = ""
    common_dir = (git_dir / common).resolve() if common else git_dir
    files += [common_dir / "config", common_dir / "config.worktree"]
    # `git status` and `git diff` look into submodules, each run with its own config
    modules = common_dir / "modules"
    if modules.is_dir():
        files += sorted(modules.glob("**/config"))[:200]
    return [path for path in dict.fromkeys(files) if path.is_file()]


def program_key(config: Path) -> str | None:
    """The first key of a git configuration file that names a program, as
    `section.subsection.key`, or None. Unreadable files name nothing (git cannot read
    them either)."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return program_key_in(text)


def program_key_in(text: str) -> str | None:
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        while line.startswith("["):
            match = _SECTION.match(line)
            if match is None:
                break
            name, sub = match.group(1).lower(), match.group(2)
            section = f"{name}.{sub.lower()}" if sub is not None else name
            line = line[match.end() :].strip()
        if not line or line[0] in "#;[":
            continue
        match = _KEY.match(line)
        if match is None:
            continue
        key = f"{section}.{match.group(1).lower()}"
        value = (match.group(2) or "").split("#")[0].split(";")[0].strip().strip('"').lower()
        if key == "core.fsmonitor" and value in _BOOLEAN_FALSE_OR_BUILTIN:
            continue
        if any(pattern.match(key) for pattern in _PROGRAM_KEYS):
            return key
    return None
