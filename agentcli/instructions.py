"""Project instructions: AGENTS.md (or the names configured in `instructions.files`) in the
workspace root and in its parent directories up to the repository root, added to the
system instructions, outermost first so that the most specific comes last."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
            path = directory / name
            if not path.is_file():
                continue
            data = path.read_bytes()
            text = data[:MAX_BYTES].decode("utf-8", errors="replace")
            if len(data) > MAX_BYTES:
                text += f"\n[… {path.name} cut at {MAX_BYTES:,} bytes]"
            found.append(Instructions(path, text.strip()))
    return found


def instructions_block(found: list[Instructions], workspace: Path) -> str:
    parts = []
    for item in found:
        try:
            shown = item.path.relative_to(workspace)
        except ValueError:
            shown = item.path
        parts.append(f"## Project instructions from {shown}\n\n{item.text}")
    return "\n\n".join(parts)
