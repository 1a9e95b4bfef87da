"""The risk of a shell command: low only when it parses as plain commands, every one of
them is a known read-only program used read-only, and no argument reaches outside the
workspace. Everything else is high, with the first reason found."""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.policy.readonly import path_operands, read_only_problem
from agentcli.policy.shell_parse import SimpleCommand, parse_command
from agentcli.tools.base import Assessment, Risk
from agentcli.workspace import Workspace


def outside_path_problem(command: SimpleCommand, workspace: Workspace, cwd: Path) -> str | None:
    """A read-only program may still read what it should not: any argument that is a path
    (it has a slash, or starts with ~, or is ..) must resolve inside the workspace."""
    for value in path_operands(command):
        if not (value.startswith("~") or "/" in value or value == ".."):
            continue
        expanded = os.path.expanduser(value)
        real = Path(os.path.realpath(os.path.join(cwd, expanded)))
        if not workspace.contains(real):
            return f"`{command.program}` would read {value}, outside the workspace"
    return None


def classify_shell(command: str, workspace: Workspace, cwd: Path | None = None) -> Assessment:
    parsed = parse_command(command)
    if not parsed.plain:
        return Assessment(Risk.HIGH, parsed.problems[0])
    where = cwd or workspace.root
    for simple in parsed.commands:
        problem = read_only_problem(simple) or outside_path_problem(simple, workspace, where)
        if problem:
            return Assessment(Risk.HIGH, problem)
    programs = ", ".join(dict.fromkeys(c.program for c in parsed.commands))
    return Assessment(Risk.LOW, f"read-only ({programs})")
