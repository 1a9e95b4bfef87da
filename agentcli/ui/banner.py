"""The REPL's first lines, fitted to the terminal: segments joined by ` · ` while they fit,
never broken inside one (at 40 columns a path broken by the terminal reads as two), and a
path too long for its line shortened from the left, where it names the least."""

from __future__ import annotations

import os

SEPARATOR = " · "


def short_path(path: str, width: int, home: str | None = None) -> str:
    """`path` with the home directory as `~`, cut from the left (`…/project/ws`) to
    `width` columns when longer."""
    home = home if home is not None else os.path.expanduser("~")
    if home and home != "/" and (path == home or path.startswith(home.rstrip("/") + "/")):
        path = "~" + path[len(home.rstrip("/")) :]
    if len(path) <= width:
        return path
    return "…" + path[len(path) - max(width - 1, 1) :]


def fit_segments(segments: list[str], width: int, indent: str = "") -> list[str]:
    """Segments on as few lines of `width` columns as they fit on; later lines indented
    by `indent` (a segment longer than a line has one of its own)."""
    lines: list[str] = []
    line = ""
    for segment in segments:
        if not line:
            line = (indent if lines else "") + segment
        elif len(line) + len(SEPARATOR) + len(segment) <= width:
            line += SEPARATOR + segment
        else:
            lines.append(line)
            line = indent + segment
    return [*lines, line] if line else lines


def banner_lines(version: str, model: str, workspace: str, width: int) -> list[str]:
    """`agentcli 0.1.0 · openai:gpt-4.1 · ~/src/project`, fitted to `width`."""
    where = short_path(workspace, width - 2)
    return fit_segments([f"agentcli {version}", model, where], width, indent="  ")
