"""The risk of a shell command: low only when it parses as plain commands, every one of
them is a known read-only program used read-only, and no argument reaches outside the
workspace. Everything else is high, with the first reason found."""

from __future__ import annotations

import glob
import os
from pathlib import Path

from agentcli.policy.git_config import repository_problem
from agentcli.policy.readonly import path_operands, read_only_problem
from agentcli.policy.shell_parse import SimpleCommand, parse_command
from agentcli.tools.base import Assessment, Risk
from agentcli.workspace import Workspace


def operand_problem(command: SimpleCommand, workspace: Workspace, cwd: Path) -> str | None:
    """A read-only program may still read what it should not, or be handed an option by a
    file name: every argument that may name a file — after tilde and glob expansion, as the
    shell would do it now — must resolve (symlinks followed) inside the workspace, and no
    glob may produce a name that starts with `-`."""
    for value, is_glob in path_operands(command):
        expanded = os.path.expanduser(value) if value.startswith("~") else value
        if is_glob:
            root = None if os.path.isabs(expanded) else cwd
            names = glob.glob(expanded, root_dir=root)
            option_like = next((n for n in names if n.startswith("-")), None)
            if option_like is not None:
                return f"the glob {value} matches {option_like!r}, which would be read as an option"
        else:
            names = [expanded]
        for name in names:
            real = Path(os.path.realpath(os.path.join(cwd, name)))
            if not workspace.contains(real):
                return f"`{command.program}` would read {value}, outside the workspace"
    return None


def simple_command_problem(
    command: SimpleCommand, workspace: Workspace, cwd: Path | None = None
) -> str | None:
    """Why one parsed command is not read-only inside this workspace, or None."""
    cwd = cwd or workspace.root
    problem = read_only_problem(command) or operand_problem(command, workspace, cwd)
    if problem is None and command.program == "git":
        problem = repository_problem(cwd)
    return problem


def classify_shell(command: str, workspace: Workspace, cwd: Path | None = None) -> Assessment:
    parsed = parse_command(command)
    if not parsed.plain:
        return Assessment(Risk.HIGH, parsed.problems[0])
    for simple in parsed.commands:
        problem = simple_command_problem(simple, workspace, cwd)
        if problem:
            return Assessment(Risk.HIGH, problem)
    programs = ", ".join(dict.fromkeys(c.program for c in parsed.commands))
    return Assessment(Risk.LOW, f"read-only ({programs})")
