"""Where skills, custom commands and subagents are looked for, most specific first: the project's
(only once the workspace is trusted, as its .agentcli/config.toml is), then the user's
beside agentcli's configuration, then the folders the other agent shells keep, so that what
a user already has works unchanged."""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.records import dataclass

# (folder, whose) in the order a name is looked for; "project" folders are the workspace's.
SKILL_FOLDERS = (
    (".agents/skills", "project"),  # the open standard's (Codex and opencode read it)
    (".claude/skills", "project"),  # Claude Code's
    (".opencode/skills", "project"),
    ("skills", "agentcli"),  # beside the user's config.toml
    ("~/.agents/skills", "user"),  # the open standard's for a user (Codex, opencode)
    ("~/.claude/skills", "user"),  # Claude Code's
    ("~/.config/opencode/skills", "user"),
)
COMMAND_FOLDERS = (
    (".agentcli/commands", "project"),
    (".claude/commands", "project"),  # Claude Code's Markdown commands
    (".opencode/commands", "project"),  # opencode's, the same Markdown
    (".opencode/command", "project"),  # (its older name)
    (".gemini/commands", "project"),  # Gemini CLI's TOML commands
    ("commands", "agentcli"),
    ("~/.claude/commands", "user"),
    ("~/.config/opencode/commands", "user"),
    ("~/.gemini/commands", "user"),
)
AGENT_FOLDERS = (
    (".agentcli/agents", "project"),
    (".claude/agents", "project"),  # Claude Code's subagents
    (".opencode/agent", "project"),  # opencode's agents (its `mode: primary` ones skipped)
    (".opencode/agents", "project"),
    ("agents", "agentcli"),
    ("~/.claude/agents", "user"),
    ("~/.config/opencode/agent", "user"),
    ("~/.config/opencode/agents", "user"),
)


@dataclass(frozen=True, slots=True)
class Folder:
    """A folder that may hold skills, commands or subagents."""

    path: Path  # as found (a link is followed when its files are read)
    label: str  # how a listing names it: `.agents/skills`, `~/.claude/skills`
    project: bool


@dataclass(frozen=True, slots=True)
class Folders:
    found: list[Folder]
    # The project's folders that exist but are not read: the workspace is not trusted.
    untrusted: list[str]


def folders(table: tuple[tuple[str, str], ...], workspace: Path, trusted: bool) -> Folders:
    """The folders of `table` that exist, each once (a workspace that is the home directory
    has one `.claude/skills`, not two)."""
    from agentcli.paths import config_dir

    found: list[Folder] = []
    untrusted: list[str] = []
    seen: set[str] = set()
    for name, whose in table:
        if whose == "project":
            path = workspace / name
        elif whose == "agentcli":
            path = config_dir() / name
        else:
            path = Path(os.path.expanduser(name))
        if not path.is_dir():
            continue
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        if whose == "project" and not trusted:
            untrusted.append(name)
            continue
        found.append(Folder(path, name if whose == "project" else shown(path), whose == "project"))
    return Folders(found, untrusted)


def shown(path: Path) -> str:
    """A path as a listing shows it: `~/...` under the home directory."""
    home = os.path.expanduser("~")
    text = str(path)
    if home not in ("", "/") and (text == home or text.startswith(home.rstrip("/") + "/")):
        return "~" + text[len(home.rstrip("/")) :]
    return text


LOOPED = "a link back to a folder already read; not read again"


@dataclass(frozen=True, slots=True)
class Walked:
    files: list[Path]  # sorted, at most the bound asked for
    looped: list[Path]  # subfolders that lead back to a folder already read (a link)


def habit_files(root: Path, suffix: str, *, depth: int, limit: int) -> Walked:
    """The `suffix` files of `root` and of its subfolders `depth` deep (links followed, as
    users link their dotfiles), each folder read once: a link back (`loop -> .`) is not
    read again but named, so that no file is found twice under two names."""
    files: list[Path] = []
    looped: list[Path] = []
    seen = {os.path.realpath(root)}
    for directory, subdirs, names in os.walk(root, followlinks=True):
        level = len(Path(directory).relative_to(root).parts)
        kept = []
        for name in sorted(d for d in subdirs if not d.startswith(".") and level < depth):
            real = os.path.realpath(os.path.join(directory, name))
            if real in seen:
                looped.append(Path(directory) / name)
                continue
            seen.add(real)
            kept.append(name)
        subdirs[:] = kept
        for name in sorted(names):
            if name.endswith(suffix) and not name.startswith("."):
                files.append(Path(directory) / name)
                if len(files) >= limit:
                    return Walked(files, looped)
    return Walked(files, looped)
