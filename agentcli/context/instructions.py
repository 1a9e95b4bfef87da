"""Project instructions: AGENTS.md (or the names configured in `instructions.files`) in the
workspace root and in its parent directories up to the repository root, added to the
system instructions, outermost first so that the most specific comes last."""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.records import dataclass
from agentcli.workspace.safe_open import read_regular

MAX_BYTES = 64 * 1024  # per file; more is cut with a note


@dataclass(frozen=True, slots=True)
class Instructions:
    path: Path
    text: str


def _search_dirs(workspace: Path) -> list[Path]:
    """The workspace and its parents up to the repository root (the directory holding
    `.git`), outermost first; only the workspace when it is not inside a repository."""
    chain = [workspace]
    if (workspace / ".git").exists():
        return chain
    for parent in workspace.parents:
        chain.append(parent)
        if (parent / ".git").exists():
            return list(reversed(chain))
    return [workspace]


def find_instructions(workspace: Path, names: list[str]) -> list[Instructions]:
    found = []
    for directory in _search_dirs(workspace):
        for name in names:
            data = _read_confined(directory, name)
            if data is None:
                continue
            text = data[:MAX_BYTES].decode("utf-8", errors="replace")
            if len(data) > MAX_BYTES:
                text += f"\n[… {name} cut at {MAX_BYTES:,} bytes]"
            found.append(Instructions(directory / name, text.strip()))
    return found


def _read_confined(directory: Path, name: str) -> bytes | None:
    """The file `name` in `directory` if it is a regular file that stays in that directory
    (a symlink may point elsewhere inside it, never out: an AGENTS.md linked to ~/.ssh/id_rsa
    or /proc/self/environ would send it to the provider). Opened without following a
    symlink swapped in meanwhile, and never blocking on a FIFO."""
    if Path(name).is_absolute() or ".." in Path(name).parts or name.startswith("~"):
        return None  # the configuration check refuses these; never read them
    real = Path(os.path.realpath(directory / name))
    if not str(real).startswith(os.path.join(str(directory), "")):
        return None
    try:
        return read_regular(real, directory, MAX_BYTES + 1)
    except OSError:
        return None  # missing, unreadable, a directory or a special file: no instructions


def instructions_block(found: list[Instructions], workspace: Path) -> str:
    parts = []
    for item in found:
        try:
            shown = item.path.relative_to(workspace)
        except ValueError:
            shown = item.path
        parts.append(f"## Project instructions from {shown}\n\n{item.text}")
    return "\n\n".join(parts)
