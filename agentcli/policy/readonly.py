"""Whether a simple command only reads: its argv checked against the read-only table
(agentcli.policy.readonly_table), git's global options and subcommand included, and which
of its arguments may name files."""

from __future__ import annotations

from agentcli.policy.argv import Option, matches
from agentcli.policy.readonly_checks import git_signature_check
from agentcli.policy.readonly_entry import Program, parse_args
from agentcli.policy.readonly_table import (
    GIT,
    GIT_ALWAYS_DENIED,
    GIT_GLOBAL_DIRS,
    GIT_GLOBAL_FLAGS,
    NETWORK,
    READ_ONLY,
    WRAPPERS,
)
from agentcli.policy.shell_parse import SimpleCommand
from agentcli.records import dataclass, replace


def _denied(program: Program, option: Option) -> str | None:
    denied = matches(option, program.deny)
    if denied is None and not option.long and option.name[1:] in program.letters:
        denied = option.name
    return denied


def _flag_problem(program: Program, name: str, args: list[str]) -> str | None:
    options, operands = parse_args(program, args)
    for option in options:
        denied = _denied(program, option)
        if denied:
            return f"`{name} {denied}` writes, runs a program or reaches out"
    if program.max_operands is not None and len(operands) > program.max_operands:
        return f"`{name}` with {len(operands)} operands writes the last one"
    if program.check is not None:
        return program.check(program, args)
    return None


def git_globals(args: list[str]) -> tuple[list[tuple[str, str, int]], int] | str:
    """git's global options before the subcommand: the directory options as (name, value,
    index of the value) and the subcommand's index, or why they are not read-only."""
    dirs: list[tuple[str, str, int]] = []
    index = 0
    while index < len(args) and args[index].startswith("-"):
        arg = args[index]
        name, eq, value = arg.partition("=")
        if arg in GIT_GLOBAL_FLAGS:
            index += 1
        elif name in GIT_GLOBAL_DIRS and (eq or name != "-C") and value:
            dirs.append((name, value, index))
            index += 1
        elif arg in GIT_GLOBAL_DIRS and index + 1 < len(args):
            dirs.append((arg, args[index + 1], index + 1))
            index += 2
        else:
            return f"`git {arg}` changes how git runs"
    return dirs, index


@dataclass(frozen=True, slots=True)
class GitCommand:
    name: str  # the subcommand
    program: Program  # its rules, with what every subcommand denies
    args: list[str]  # its arguments
    offset: int  # where they start in git's arguments
    dirs: list[tuple[str, str, int]]  # -C, --git-dir, --work-tree: (name, value, index)


# `git help` (and `--help`) starts the viewer the configuration names: a repository's
# man.<tool>.cmd or browser.<tool>.cmd is a command line of its choosing.
GIT_HELP_RUNS = "it starts the viewer git's configuration names (man.viewer, help.browser)"


def git_subcommand(args: list[str]) -> GitCommand | str:
    """The subcommand of git's `args`, or why this git command is not read-only."""
    found = git_globals(args)
    if isinstance(found, str):
        return found
    dirs, index = found
    if index >= len(args):
        return "`git` without a subcommand"
    name = args[index]
    sub = (GIT.subcommands or {}).get(name)
    if sub is None:
        return f"`git {name}` is not a read-only subcommand"
    if "--help" in args[index + 1 :]:
        return f"`git {name} --help` is `git help {name}`: {GIT_HELP_RUNS}"
    sub = replace(sub, deny=sub.deny | GIT_ALWAYS_DENIED, letters=sub.letters + "O")
    return GitCommand(name, sub, args[index + 1 :], index + 1, dirs)


def read_only_problem(command: SimpleCommand) -> str | None:
    """None when `command` only reads; otherwise the reason it is not read-only."""
    name, args = command.program, list(command.argv[1:])
    if name in WRAPPERS:
        return f"`{name}` runs other programs"
    if name in NETWORK:
        return f"`{name}` reaches the network"
    program = READ_ONLY.get(name)
    if program is None:
        return f"`{name}` is not a known read-only program"
    if not program.globs and any(command.has_glob[1:]):
        return f"an unquoted glob could expand into options of `{name}`"
    if program.subcommands is None:
        return _flag_problem(program, name, args)
    git = git_subcommand(args)
    if isinstance(git, str):
        return git
    return git_signature_check(git.args) or _flag_problem(git.program, f"git {git.name}", git.args)


def path_operands(command: SimpleCommand) -> list[tuple[str, bool]]:
    """The arguments that may name files, each with whether it is an unquoted glob:
    operands, long options' values after `=`, and the values of options that read a file
    (`grep -f FILE`, `-fFILE`, `--fi=FILE`) — but not the first operand of programs whose
    first operand is a pattern or script, unless an option gave the pattern."""
    program = READ_ONLY.get(command.program) or Program()
    args, globs = list(command.argv[1:]), command.has_glob[1:]
    if not program.paths:  # only globs, which read directories (`echo ../*`)
        return [(arg, True) for arg, glob in zip(args, globs, strict=True) if glob]
    values: list[tuple[str, bool]] = []
    if program.subcommands is not None:  # git: its subcommand's (-C's directory: shell_risk)
        git = git_subcommand(args)
        if isinstance(git, str):
            return list(zip(args, globs, strict=True))
        program, args, globs = git.program, git.args, globs[git.offset :]
    options, operands = parse_args(program, args)
    for option in options:
        where = option.value_index if option.value_index is not None else option.index
        if option.value is None:
            continue
        if matches(option, program.file_options) or (option.long and where == option.index):
            values.append((option.value, globs[where]))
    pattern_given = any(matches(o, program.pattern_options) for o in options)
    if program.pattern_first and not pattern_given:
        operands = operands[1:]
    values.extend((args[i], globs[i]) for i in operands)
    return values
