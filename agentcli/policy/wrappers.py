"""What a deny rule sees in one simple command: the command itself, and every command it
runs through a wrapper (`sudo`, `env`, `timeout`, `xargs`, `bash -c`, `eval`, `find -exec`,
...), to any depth. A wrapper's own options are not parsed (every wrapper has its own, and
a mistake would be a bypass): every suffix of its arguments is a candidate command, which
can only make a deny rule match more. When the wrapped program cannot be known at all (a
script file, a shell reading stdin, a string decided when it runs), the command is
`unknowable` and every deny rule for the tool matches it: the deny rule wins."""

from __future__ import annotations

import re

from agentcli.policy.shell_parse import UNKNOWN
from agentcli.records import dataclass, field

# Programs that run the rest of their arguments as a command (after options of their own).
WRAPPERS = frozenset(
    {
        "command",
        "builtin",
        "exec",
        "nohup",
        "sudo",
        "doas",
        "pkexec",
        "time",
        "nice",
        "env",
        "timeout",
        "setsid",
        "stdbuf",
        "ionice",
        "taskset",
        "chroot",
        "flock",
        "unbuffer",
        "chrt",
        "nsenter",
        "unshare",
        "runuser",
        "systemd-run",
        "strace",
        "ltrace",
        "fakeroot",
        "firejail",
        "numactl",
        "cgexec",
        "proot",
        "torsocks",
        "proxychains",
        "proxychains4",
        "caffeinate",
        "catchsegv",
        "valgrind",
        "entr",
        "busybox",
        "sg",
        "watch",
        "xargs",
        "parallel",
        "su",
        "script",
        "sandbox-exec",
        "npx",
        "bunx",
        "pnpx",
        "dbus-launch",
        "xvfb-run",
        "faketime",
        "eatmydata",
        "trickle",
        "prlimit",
        "cpulimit",
        "with-lock",
    }
)
# Program and subcommand pairs that run the rest as a command.
SUBCOMMAND_WRAPPERS = frozenset(
    {
        ("uv", "run"),
        ("poetry", "run"),
        ("pipenv", "run"),
        ("bundle", "exec"),
        ("npm", "exec"),
        ("pnpm", "exec"),
        ("pnpm", "dlx"),
        ("yarn", "exec"),
        ("yarn", "dlx"),
        ("conda", "run"),
        ("pixi", "run"),
        ("hatch", "run"),
        ("pdm", "run"),
        ("rye", "run"),
        ("mise", "exec"),
        ("asdf", "exec"),
        ("nix", "shell"),
        ("direnv", "exec"),
    }
)
# Programs that run a shell command given as one string.
SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh", "rbash"}
)
_STRING_RUNNERS = frozenset({"eval", "watch", "su", "flock", "script", "runuser"})
_APPEND_ARGUMENTS = frozenset({"xargs", "parallel"})  # they add arguments read from stdin
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_MAX_DEPTH = 6
# Programs that run a program text or file a rule cannot see into: any use but asking their
# version or help makes the commands within unknowable, so a deny rule that could match
# what they run applies (security.md §30). `source` and `.` run a script in the shell.
INTERPRETERS = frozenset(
    {
        "python",
        "python2",
        "python3",
        "pypy",
        "pypy3",
        "perl",
        "ruby",
        "node",
        "nodejs",
        "deno",
        "bun",
        "php",
        "lua",
        "luajit",
        "Rscript",
        "R",
        "tclsh",
        "wish",
        "osascript",
        "pwsh",
        "powershell",
        "julia",
        "guile",
        "racket",
        "sbcl",
        "ghci",
        "runghc",
        "scala",
        "kotlin",
        "groovy",
        "jshell",
        "source",
        ".",
    }
)
_PYTHON_VERSIONED = re.compile(r"^(python|pypy)\d+(\.\d+)*$")
_ONLY_ASKING = frozenset({"--version", "-V", "--help", "-h", "-v"})
AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
# What in an awk program runs a command: system(), a pipe to or from a command.
_AWK_RUNS = re.compile(r"\bsystem\s*\(|\|\s*getline|\|\s*\"|\|&|print[^;]*\|")


@dataclass(slots=True)
class Within:
    """The commands a deny rule must see, and whether some program cannot be known."""

    commands: list[tuple[str, ...]] = field(default_factory=list)
    unknowable: bool = False


def commands_within(argv: tuple[str, ...]) -> Within:
    found = Within()
    _collect(argv, found, 0)
    return found


def _collect(argv: tuple[str, ...], found: Within, depth: int) -> None:
    if not argv or argv in found.commands:
        return
    if depth > _MAX_DEPTH:
        found.unknowable = True
        return
    found.commands.append(argv)
    program = argv[0].rsplit("/", 1)[-1]
    rest = argv[1:]
    if "/" in argv[0] and not argv[0].startswith("/"):
        found.unknowable = True  # a script of the workspace (`./build.sh`): not knowable
    if program != argv[0]:
        _collect((program, *rest), found, depth + 1)  # /bin/rm is rm
    if program in SHELLS:
        _shell(rest, found, depth)
    if _interprets(program, rest):
        found.unknowable = True  # a program text or file: what it runs cannot be known
    if program in _STRING_RUNNERS:
        _parse_string(" ".join(w for w in rest if not w.startswith("-")), found, depth)
    if program == "find":
        _find_exec(rest, found, depth)
    if program in WRAPPERS or (program, rest[0] if rest else "") in SUBCOMMAND_WRAPPERS:
        start = 1 if program not in WRAPPERS else 0
        extra = (UNKNOWN,) if program in _APPEND_ARGUMENTS else ()
        for i in range(start, len(rest)):
            suffix = rest[i:]
            _collect((*suffix, *extra), found, depth + 1)
            if " " in suffix[0] or "\t" in suffix[0]:  # env -S 'rm -rf x', su -c 'rm x'
                _parse_string(suffix[0], found, depth)
            if suffix[0].startswith("-S") and len(suffix[0]) > 2:  # env -S'rm -rf x'
                _parse_string(suffix[0][2:], found, depth)
            if suffix[0].startswith("--split-string="):
                _parse_string(suffix[0].partition("=")[2], found, depth)
    if program == "git":
        if any(a.startswith("alias.") or "=alias." in a for a in rest):
            found.unknowable = True  # `git -c alias.x='!cmd' x` runs a shell command
        _collect(_git_without_global_options(rest), found, depth + 1)


def _interprets(program: str, args: tuple[str, ...]) -> bool:
    """Whether this runs code no rule can see into: an interpreter (a body, a script, or
    stdin: a heredoc), a script run by its path, an awk program that runs commands."""
    if program in INTERPRETERS or _PYTHON_VERSIONED.match(program):
        return not (args and all(a in _ONLY_ASKING for a in args))
    if program in AWKS:
        return any(_AWK_RUNS.search(arg) for arg in args) or any(
            a in ("-f", "--file") or a.startswith("-f") for a in args
        )
    return False


def _shell(args: tuple[str, ...], found: Within, depth: int) -> None:
    """`bash -c 'script'`: the script's commands. A shell running a file, or reading
    commands from stdin, runs what cannot be known here."""
    has_c = False
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            i += 1
            break
        if word in _SHELL_VALUE_OPTIONS:
            i += 2
            continue
        if word[:1] in "-+" and len(word) > 1:
            has_c = has_c or (not word.startswith("--") and "c" in word[1:])
            i += 1
            continue
        break
    operands = args[i:]
    if has_c and operands:
        _parse_string(operands[0], found, depth)
    elif any(a in ("--version", "--help") for a in args) and not operands:
        return
    else:
        found.unknowable = True  # a script file, or commands from stdin


def _parse_string(text: str, found: Within, depth: int) -> None:
    from agentcli.policy.shell_parse import parse_command

    if UNKNOWN in text:
        found.unknowable = True  # decided only when it runs
        return
    if not text.strip():
        return
    parsed = parse_command(text)
    if not parsed.commands and parsed.problems:
        found.unknowable = True  # not even a command could be found in it
    for command in parsed.commands:
        _collect(command.argv, found, depth + 1)


def _find_exec(args: tuple[str, ...], found: Within, depth: int) -> None:
    i = 0
    while i < len(args):
        if args[i] in _FIND_EXEC:
            end = i + 1
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            command = tuple(UNKNOWN if "{}" in w else w for w in args[i + 1 : end])
            _collect(command, found, depth + 1)
            i = end
        i += 1


def _git_without_global_options(rest: tuple[str, ...]) -> tuple[str, ...]:
    """`git --no-pager -C sub push` as `git push`."""
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] in ("-c", "-C") else rest[1:]
    return ("git", *rest)
