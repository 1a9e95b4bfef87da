"""What flags alone cannot say about a program of the read-only table: the checks its
entries name (sed scripts and awk programs that only print, `git config` that only reads,
`ls -R` that does not follow links...), each given the entry and the argv after the
program, returning why the command is not read-only."""

from __future__ import annotations

import re

from agentcli.policy.argv import matches
from agentcli.policy.readonly_entry import Check, Program, parse_args
from agentcli.policy.scripts import awk_program_problem, sed_script_problem


def _script_sources(program: Program, args: list[str], code: set[str]) -> list[str] | str:
    """The program texts of sed or awk: the values of `code` options (-e), else the first
    operand; or why they cannot be checked."""
    options, operands = parse_args(program, args)
    sources: list[str] = []
    for option in options:
        if matches(option, code):
            sources.append(option.value or "")
        elif matches(option, program.file_options):
            return f"{option.name} reads the program from a file"
        elif not matches(option, program.long_values) and option.name not in program.allowed:
            return f"{option.name} is not known to be read-only"
    if not sources:
        if not operands:
            return "no program"
        sources.append(args[operands[0]])
    return sources


def sed_check(program: Program, args: list[str]) -> str | None:
    """sed scripts that only print or edit the stream: no w/W/r/R/e, no in-place editing."""
    sources = _script_sources(program, args, {"-e", "--expression"})
    if isinstance(sources, str):
        return f"sed: {sources}"
    return sed_script_problem("\n".join(sources))


def awk_check(program: Program, args: list[str]) -> str | None:
    """awk programs that only print: no system(), pipes, redirections, getline < file."""
    sources = _script_sources(program, args, {"-e", "--source"})
    if isinstance(sources, str):
        return f"awk: {sources}"
    return next(filter(None, map(awk_program_problem, sources)), None)


def only_listing(*allowed: str, patterns: tuple[str, ...] = ()) -> Check:
    """For commands that list with no operand but create, delete or change with one; with
    one of `patterns` given (`git branch --list`), operands are patterns to list."""

    def check(program: Program, args: list[str]) -> str | None:
        listing = any(a.split("=", 1)[0] in patterns for a in args)
        for arg in args:
            if arg.startswith("-"):
                if arg.split("=", 1)[0] not in allowed:
                    return f"{arg} may change something"
            elif not listing:
                return f"{arg!r} as an operand creates or changes something"
        return None

    return check


_SIGNATURES = re.compile(r"%G|%\(signature")  # format placeholders that run gpg


def git_signature_check(args: list[str]) -> str | None:
    """Every git subcommand: formats that verify signatures run gpg.program."""
    found = next((a for a in args if _SIGNATURES.search(a)), None)
    if found is not None:
        return f"`{found}` verifies signatures: git would run gpg"
    return None


def git_config_check(program: Program, args: list[str]) -> str | None:
    readers = {
        "--get",
        "--get-all",
        "--get-regexp",
        "--list",
        "-l",
        "--show-origin",
        "--show-scope",
        "--global",
        "--local",
        "--system",
        "--name-only",
        "-z",
        "--null",
    }
    if not any(a in readers - {"--global", "--local", "--system"} for a in args):
        return "git config without --get or --list changes the configuration"
    for arg in args:
        if arg.startswith("-") and arg not in readers:
            return f"git config {arg} may change the configuration"
    return None


def stash_check(program: Program, args: list[str]) -> str | None:
    if args[:1] in (["list"], ["show"]):
        return None
    return "only `git stash list` and `git stash show` are read-only"


def worktree_check(program: Program, args: list[str]) -> str | None:
    return None if args[:1] == ["list"] else "only `git worktree list` is read-only"


def reflog_check(program: Program, args: list[str]) -> str | None:
    if not args or args[0] == "show" or args[0].startswith("-"):
        return None
    return "only showing the reflog is read-only"


def ls_check(program: Program, args: list[str]) -> str | None:
    options, _ = parse_args(program, args)
    names = {o.name for o in options}
    recursive = "-R" in names or any(matches(o, {"--recursive"}) for o in options)
    follows = "-L" in names or any(matches(o, {"--dereference"}) for o in options)
    if recursive and follows:
        return "`ls -R` with -L follows symbolic links out of the workspace"
    return None


def diff_check(program: Program, args: list[str]) -> str | None:
    options, _ = parse_args(program, args)
    recursive = any(o.name == "-r" or matches(o, {"--recursive"}) for o in options)
    if recursive and not any(matches(o, {"--no-dereference"}) for o in options):
        return "`diff -r` follows symbolic links out of the workspace (add --no-dereference)"
    return None


def date_check(program: Program, args: list[str]) -> str | None:
    _, operands = parse_args(program, args)
    setting = next((args[i] for i in operands if not args[i].startswith("+")), None)
    return f"`date {setting}` sets the clock" if setting is not None else None


_JQ_MODULES = re.compile(r"\b(import|include|modulemeta|get_search_list)\b")


def jq_check(program: Program, args: list[str]) -> str | None:
    """jq programs can read modules and data files by name (`import "x" as $d`)."""
    for arg in args:
        if _JQ_MODULES.search(arg):
            return "a jq program that imports modules or data may read files by name"
    return None


def ps_check(program: Program, args: list[str]) -> str | None:
    """`ps e` (BSD style, no dash) and the `environ` column print every process's
    environment, keys included."""
    if any("env" in arg.lower() for arg in args):
        return "this ps format shows the environment of processes, secrets included"
    values = "oOpqtUkg"  # BSD-style letters whose value is the next word
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg.startswith("-"):
            if (arg[1:2] in set("oOpqtuUgGCsk") and len(arg) == 2) or arg in ("--format", "--sort"):
                skip = True
            continue
        for letter in arg:
            if letter == "e":
                return "`ps e` shows the environment of processes, secrets included"
            if letter in values:
                skip = True
                break
    return None
