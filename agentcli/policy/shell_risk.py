"""The risk of a shell command: low only when it parses as plain commands, every one of
them is a known read-only program used read-only, and no argument reaches outside the
workspace. Everything else is high, with the first reason found.

`contained=True` says the command will run in an OS sandbox with the read-only profile
(no writes but a private temp dir, no network, no reads outside the workspace and the
system directories). Then a few shell forms whose only effect is local become low too:
here-documents and here-strings, command and input process substitutions, `&`, and
redirections to /dev/null — as long as every command inside is itself read-only. Nothing
that could leave the sandbox (a program run by an option, say) becomes low this way."""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Callable
from pathlib import Path

from agentcli.policy.git_config import repository_problem
from agentcli.policy.readonly import git_subcommand, path_operands, read_only_problem
from agentcli.policy.secrets import git_config_problem, recursive_problem
from agentcli.policy.shell_parse import PROCESS_FILE, UNKNOWN, SimpleCommand, parse_command
from agentcli.risk import Assessment, Risk
from agentcli.workspace.root import Workspace
from agentcli.workspace.sensitive import read_secret_reason


def operand_problem(command: SimpleCommand, workspace: Workspace, cwd: Path) -> str | None:
    """A read-only program may still read what it should not, or be handed an option by a
    file name: every argument that may name a file — after tilde and glob expansion, as the
    shell would do it now — must resolve (symlinks followed) inside the workspace, and no
    glob may produce a name that starts with `-`."""
    return paths_problem(command.program, path_operands(command), workspace, cwd)


def paths_problem(
    program: str, values: list[tuple[str, bool]], workspace: Workspace, cwd: Path
) -> str | None:
    for value, is_glob in values:
        if value == PROCESS_FILE:
            continue  # a pipe from a command checked on its own
        if UNKNOWN in value:
            return f"`{program}` would read a file named only when it runs"
        expanded = os.path.expanduser(value) if value.startswith("~") else value
        if is_glob:
            dots = next((c for c in expanded.split("/") if _matches_dot_dot(c)), None)
            if dots is not None:
                return f"the glob {value} may match `..` (bash without globskipdots)"
            root = None if os.path.isabs(expanded) else cwd
            # A glob that matches nothing stays the word itself (bash without nullglob):
            # `cat /root/*` reads a path outside as surely as one that matches.
            names = glob.glob(expanded, root_dir=root) or [expanded]
            option_like = next((n for n in names if n.startswith("-")), None)
            if option_like is not None:
                return f"the glob {value} matches {option_like!r}, which would be read as an option"
        else:
            names = [expanded]
        for name in names:
            real = Path(os.path.realpath(os.path.join(cwd, name)))
            if not workspace.contains(real):
                return f"`{program}` would read {value}, outside the workspace"
            secret = read_secret_reason(real)
            if secret is not None:
                return f"`{program}` would read {name}: {secret}"
    return None


def _matches_dot_dot(component: str) -> bool:
    return component != ".." and component.startswith(".") and fnmatch.fnmatchcase("..", component)


# Programs that read no file whatever their arguments: in a sandbox they may take words
# only the shell decides (a substitution's output, which may split into several options).
# A program that reads files is not here: such a word could become `-f /etc/x` or `-r`.
ANY_ARGUMENTS_IN_SANDBOX = frozenset(
    {
        "echo",
        "printf",
        "basename",
        "dirname",
        "true",
        "false",
        "pwd",
        "whoami",
        "id",
        "uname",
        "seq",
        "expr",
        "sleep",
        "wait",
        "numfmt",
        "tr",
        "which",
    }
)


def unknown_words_problem(command: SimpleCommand, contained: bool) -> str | None:
    """Why a command with words only the shell decides is not low (None when it may be)."""
    if command.complete:
        return None
    if not contained:
        return "a word is decided only when it runs"
    if command.program == UNKNOWN:
        return "the program's name is decided only when it runs"
    if command.program not in ANY_ARGUMENTS_IN_SANDBOX:
        return f"`{command.program}` gets arguments decided only when it runs"
    return None


def simple_command_problem(
    command: SimpleCommand,
    workspace: Workspace,
    cwd: Path | None = None,
    *,
    contained: bool = False,
) -> str | None:
    """Why one parsed command is not read-only inside this workspace, or None."""
    cwd = cwd or workspace.root
    problem = unknown_words_problem(command, contained) or read_only_problem(command)
    if problem is not None or command.program != "git":
        return (
            problem
            or operand_problem(command, workspace, cwd)
            or recursive_problem(command, [v for v, _ in path_operands(command)], cwd)
        )
    git = git_subcommand(list(command.argv[1:]))
    if isinstance(git, str):
        return git
    here, git_dir = cwd, None  # where git runs after `-C`, and its `--git-dir`
    for name, value, _ in git.dirs:
        path = Path(os.path.realpath(here / os.path.expanduser(value)))
        if not workspace.contains(path):
            return f"`git {name}` names {value}, outside the workspace"
        if name == "-C":
            here = path
        elif name == "--git-dir":
            git_dir = path
    return (
        operand_problem(command, workspace, here)
        or git_config_problem(git.name, here)
        or repository_problem(
            here, git.name, git_dir=git_dir, contains=workspace.contains, args=git.args
        )
    )


# Programs that show other processes' command lines (agentcli's own among them) where the
# sandbox does not give the command a /proc of its own.
PROCESS_LISTERS = frozenset(
    {"ps", "pgrep", "pidof", "pstree", "top", "htop", "lsof", "fuser", "w", "who"}
)


def classify_shell(
    command: str,
    workspace: Workspace,
    cwd: Path | None = None,
    *,
    contained: bool = False,
    processes_visible: Callable[[], bool] | None = None,
) -> Assessment:
    """`processes_visible`: whether other processes are in the command's view (no PID
    namespace: Landlock alone, or no sandbox), asked only of a command that lists them;
    None: they are."""
    parsed = parse_command(command, contained=contained)
    if not parsed.plain:
        return Assessment(Risk.HIGH, parsed.problems[0])
    problem = paths_problem("<", parsed.inputs, workspace, cwd or workspace.root)
    if problem:
        return Assessment(Risk.HIGH, problem)
    for simple in parsed.commands:
        problem = simple_command_problem(simple, workspace, cwd, contained=contained)
        if problem:
            return Assessment(Risk.HIGH, problem)
    programs = ", ".join(dict.fromkeys(c.program for c in parsed.commands))
    listing = next((c.program for c in parsed.commands if c.program in PROCESS_LISTERS), None)
    if listing is not None and (processes_visible is None or processes_visible()):
        return Assessment(
            Risk.MEDIUM,
            f"`{listing}` shows every process's command line here, agentcli's own included "
            "(only bubblewrap's sandbox gives commands a process list of their own)",
        )
    return Assessment(Risk.LOW, f"read-only ({programs})")
