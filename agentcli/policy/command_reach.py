"""What a command line reaches, for deny and ask rules: whether it may run a program no
rule can see (the shell's forms: agentcli.policy.shell_reach; each command and what its
wrappers run: agentcli.policy.wrappers and agentcli.policy.runners), and what its git
commands run because of their repository (agentcli.policy.git_runs)."""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.policy.git_runs import repository_runs
from agentcli.policy.program_options import git_subcommand_index
from agentcli.policy.readonly import read_only_problem
from agentcli.policy.shell_parse import UNKNOWN, ParsedCommand, SimpleCommand, parse_command
from agentcli.policy.shell_reach import line_hidden
from agentcli.policy.wrappers import commands_within, late_words


def command_line_hidden(parsed: ParsedCommand) -> str | None:
    """Why this command line may run a program that no rule can see, or None when every
    program it can run is among its commands and what their wrappers run."""
    reason = line_hidden(parsed)
    if reason is not None:
        return reason
    for command in parsed.commands:
        hidden = commands_within(late_words(command)).hidden
        if hidden is not None:
            return hidden
    return None


def repository_reach(
    parsed: ParsedCommand, cwd: Path
) -> tuple[tuple[SimpleCommand, ...], str | None]:
    """The commands that git commands of this line run because of their repository's
    configuration (for deny rules to match), and why one may run a hook no rule can read
    (agentcli.policy.git_runs)."""
    also: list[SimpleCommand] = []
    hidden: str | None = None
    for command in parsed.commands:
        for argv in commands_within(late_words(command)).commands:
            if argv[0].rsplit("/", 1)[-1] != "git":
                continue
            found = git_subcommand_index(argv)
            if isinstance(found, str):
                continue
            subcommand = git_run_subcommand(argv, found)
            if subcommand is None:
                continue
            here = _where_git_runs(argv[:found], cwd)
            if here is None:
                hidden = hidden or "git runs in a directory decided only when it runs"
                continue
            reads = read_only_problem(SimpleCommand(argv, (False,) * len(argv))) is None
            runs = repository_runs(here, subcommand, list(argv[found + 1 :]), reads)
            hidden = hidden or runs.hidden
            for text in runs.commands:
                nested = parse_command(text)
                hidden = hidden or command_line_hidden(nested)
                also.extend(nested.commands)
    return tuple(also), hidden


def git_run_subcommand(argv: tuple[str, ...], found: int) -> str | None:
    """The subcommand git runs for `argv` (its subcommand at `found`): `help` for
    `git --help ...`, `git help ...` and `git SUB --help`, which start a viewer; None for
    a git without one."""
    if "--help" in argv[1:found] or (found < len(argv) and "--help" in argv[found + 1 :]):
        return "help"
    return argv[found] if found < len(argv) else None


def _where_git_runs(options: tuple[str, ...], cwd: Path) -> Path | None:
    """The directory git's `-C` and `--git-dir` options point it at."""
    here = cwd
    for position, word in enumerate(options):
        name, eq, value = word.partition("=")
        if name in ("-C", "--git-dir") and not eq and position + 1 < len(options):
            value = options[position + 1]
        elif not (name == "--git-dir" and eq):
            continue
        if UNKNOWN in value:
            return None
        here = here / os.path.expanduser(value)
    return here
