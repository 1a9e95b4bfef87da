"""What a deny rule sees in one simple command: the command itself, and every command it
runs through a wrapper (`sudo`, `env`, `timeout`, `xargs`, `bash -c`, `eval`, `find -exec`,
`ssh host cmd`, ...), to any depth. A wrapper's own options are not parsed (every wrapper
has its own, and a mistake would be a bypass): every suffix of its arguments is a candidate
command, which can only make a deny rule match more. When what runs cannot be known at all
(a script file, a shell reading stdin, a string decided when it runs, any program of
agentcli.policy.runners), `hidden` says why, and every deny rule for the tool matches it:
the deny rule wins."""

from __future__ import annotations

from agentcli.policy.shell_parse import UNKNOWN, SimpleCommand
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
        "coproc",
        "start-stop-daemon",
        "rlwrap",
        "ssh",
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
        ("perf", "record"),
        ("perf", "stat"),
        ("perf", "trace"),
        ("cmake", "-E"),
    }
)
# Programs that run a shell command given as one string.
SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh", "rbash"}
)
_STRING_RUNNERS = frozenset({"eval", "watch", "su", "flock", "script", "runuser", "ssh"})
_APPEND_ARGUMENTS = frozenset({"xargs", "parallel"})  # they add arguments read from stdin
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_MAX_DEPTH = 6
# Wrappers that run a shell reading its input unless given a command (`su`, `script`).
_SHELL_UNLESS_COMMAND = frozenset({"su", "runuser", "script"})


@dataclass(slots=True)
class Within:
    """The commands a deny rule must see, and why some program cannot be known (then
    every deny rule for the tool matches)."""

    commands: list[tuple[str, ...]] = field(default_factory=list)
    hidden: str | None = None

    def hide(self, reason: str) -> None:
        self.hidden = self.hidden or reason


def commands_within(argv: tuple[str, ...]) -> Within:
    found = Within()
    _collect(argv, found, 0)
    return found


def _collect(argv: tuple[str, ...], found: Within, depth: int) -> None:
    from agentcli.policy.runners import hidden_in

    if not argv or argv in found.commands:
        return
    if depth > _MAX_DEPTH:
        found.hide("wrappers nested deeper than agentcli follows")
        return
    found.commands.append(argv)
    program = argv[0].rsplit("/", 1)[-1]
    rest = argv[1:]
    hidden = hidden_in(argv)
    if hidden is not None:
        found.hide(hidden.reason)
    if program != argv[0]:
        _collect((program, *rest), found, depth + 1)  # /bin/rm is rm
    if program in SHELLS:
        _shell(program, rest, found, depth)
    if program in _STRING_RUNNERS:
        if program in _SHELL_UNLESS_COMMAND and not any(map(_names_command, rest)):
            found.hide(f"`{program}` runs a shell that reads its commands from its input")
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
        _collect(_git_without_global_options(argv), found, depth + 1)


def _names_command(word: str) -> bool:
    """`su -c CMD`, `script --command=CMD`, `su -lc CMD`: a command is given."""
    if word.startswith("--"):
        return word.startswith("--command")
    return word.startswith("-") and "c" in word[1:]


def _shell(program: str, args: tuple[str, ...], found: Within, depth: int) -> None:
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
        found.hide(f"`{program}` runs a script file or commands from its input")


def _parse_string(text: str, found: Within, depth: int) -> None:
    """A command line inside a word (`bash -c '...'`, `eval ...`): its commands, and
    whatever in it may run a program its parse does not show."""
    from agentcli.policy.shell_parse import parse_command
    from agentcli.policy.shell_reach import line_hidden

    if UNKNOWN in text:
        found.hide("a command is decided only when it runs")
        return
    if not text.strip():
        return
    parsed = parse_command(text)
    reason = line_hidden(parsed)
    if reason is not None:
        found.hide(reason)
    for command in parsed.commands:
        _collect(late_words(command), found, depth + 1)


def late_words(command: SimpleCommand) -> tuple[str, ...]:
    """The command's words, with every word the shell still expands (a glob, a brace
    expansion, an expansion) as UNKNOWN: it may become any words, or none."""
    braces = command.braces or (False,) * len(command.argv)
    return tuple(
        UNKNOWN if glob or brace else word
        for word, glob, brace in zip(command.argv, command.has_glob, braces, strict=True)
    )


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


def _git_without_global_options(argv: tuple[str, ...]) -> tuple[str, ...]:
    """`git --no-pager -C sub push` as `git push`."""
    from agentcli.policy.program_options import git_subcommand_index

    found = git_subcommand_index(argv)
    return argv if isinstance(found, str) else ("git", *argv[found:])
