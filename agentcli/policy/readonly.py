"""Programs that only read, and the argv rules that keep them read-only.

One readable table: each program lists the flags that would make it write, run another
program or reach the network, and examples in both directions that the tests check (as
Codex's execpolicy does). A program not in the table is never low risk; neither are
wrappers (env, xargs, timeout, nice, bash -c, eval, python -c) or network programs."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from agentcli.policy.shell_parse import SimpleCommand

Check = Callable[[list[str]], str | None]  # argv after the program -> why it is not read-only


@dataclass(frozen=True, slots=True)
class Program:
    why: str = ""  # what it does, for explanations
    deny: frozenset[str] = frozenset()  # flags that write, execute or reach out
    letters: str = ""  # short flags (bundled or not, e.g. -ni) that are denied
    globs: bool = True  # unquoted globs are safe (no option could turn dangerous)
    max_operands: int | None = None  # most non-flag arguments (uniq IN OUT writes OUT)
    check: Check | None = None
    subcommands: dict[str, Program] | None = None  # git: only these, each with its rules
    low: tuple[str, ...] = ()  # examples that must classify as low
    high: tuple[str, ...] = ()  # examples that must not
    pattern_first: bool = False  # the first operand is a pattern or script, not a path
    file_options: frozenset[str] = frozenset()  # options whose value is a file it reads
    options_end_at_double_dash: bool = True  # false for find: its predicates follow paths
    paths: bool = True  # false when no argument names a file (echo prints its arguments)


def _sed_check(args: list[str]) -> str | None:
    """Only `sed -n` printing scripts: no w/W/e/r/R commands, no in-place editing."""
    scripts = []
    quiet = False
    it = iter(args)
    for arg in it:
        if arg in ("-n", "--quiet", "--silent"):
            quiet = True
        elif arg in ("-e", "--expression"):
            scripts.append(next(it, ""))
        elif arg.startswith("--expression="):
            scripts.append(arg.split("=", 1)[1])
        elif arg.startswith("-") and arg != "-":
            if set(arg[1:]) <= {"n", "E", "r", "s", "u", "z"} and not arg.startswith("--"):
                quiet = quiet or "n" in arg
                continue
            return f"sed {arg} is not a read-only flag"
        elif not scripts:
            scripts.append(arg)
    if not quiet:
        return "sed without -n is used to edit; only `sed -n` printing is read-only"
    printing = re.compile(r"^((\d+|\$|/[^/]*/)(,(\d+|\$|/[^/]*/))?)?p$")
    for script in scripts:
        for part in script.split(";"):
            if not printing.match(part.strip()):
                return f"the sed script {script!r} may write or run commands"
    return None


def _only_listing(*allowed: str) -> Check:
    """For commands that list with no operand but create, delete or change with one."""

    def check(args: list[str]) -> str | None:
        for arg in args:
            if arg.startswith("-"):
                if arg.split("=", 1)[0] not in allowed:
                    return f"{arg} may change something"
            else:
                return f"{arg!r} as an operand creates or changes something"
        return None

    return check


def _git_config_check(args: list[str]) -> str | None:
    readers = {
        "--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin", "--show-scope",
        "--global", "--local", "--system", "--name-only", "-z", "--null",
    }  # fmt: skip
    if not any(a in readers - {"--global", "--local", "--system"} for a in args):
        return "git config without --get or --list changes the configuration"
    for arg in args:
        if arg.startswith("-") and arg not in readers:
            return f"git config {arg} may change the configuration"
    return None


_DIFF_WRITERS = frozenset({"--output", "--ext-diff", "--textconv"})

GIT = Program(
    why="git, read-only subcommands",
    globs=False,
    subcommands={
        "status": Program(),
        "log": Program(deny=_DIFF_WRITERS),
        "show": Program(deny=_DIFF_WRITERS),
        "diff": Program(deny=_DIFF_WRITERS | {"--no-index"}),
        "blame": Program(deny=frozenset({"--contents"})),
        "shortlog": Program(),
        "describe": Program(),
        "rev-parse": Program(),
        "rev-list": Program(),
        "ls-files": Program(),
        "ls-tree": Program(),
        "cat-file": Program(deny=frozenset({"--filters", "--textconv"})),
        "merge-base": Program(),
        "name-rev": Program(),
        "count-objects": Program(),
        "grep": Program(deny=frozenset({"--open-files-in-pager", "-O"})),
        "branch": Program(
            check=_only_listing(
                "-a",
                "--all",
                "-r",
                "--remotes",
                "-l",
                "--list",
                "-v",
                "-vv",
                "--verbose",
                "--show-current",
                "--contains",
                "--no-contains",
                "--merged",
                "--no-merged",
                "--sort",
                "--format",
                "--color",
                "--no-color",
                "--column",
                "--no-column",
            )
        ),
        "tag": Program(
            check=_only_listing(
                "-l", "--list", "-n", "--sort", "--contains", "--points-at", "--format", "--merged"
            )
        ),
        "remote": Program(check=_only_listing("-v", "--verbose")),
        "stash": Program(
            check=lambda a: (
                None
                if a[:1] in (["list"], ["show"])
                else "only `git stash list` and `git stash show` are read-only"
            )
        ),
        "worktree": Program(
            check=lambda a: None if a[:1] == ["list"] else "only `git worktree list` is read-only"
        ),
        "reflog": Program(
            check=lambda a: (
                None
                if not a or a[0] == "show" or a[0].startswith("-")
                else "only showing the reflog is read-only"
            )
        ),
        "config": Program(check=_git_config_check),
    },
    low=(
        "git status",
        "git log --oneline -5",
        "git diff HEAD~1 -- src",
        "git show HEAD:README.md",
        "git branch -a",
        "git --no-pager log -3",
        "git remote -v",
        "git stash list",
        "git config --get user.name",
        "git blame -L 1,5 README.md",
    ),
    high=(
        "git push origin main",
        "git commit -m x",
        "git -c core.pager=evil log",
        "git diff --output=/tmp/x",
        "git log --ext-diff",
        "git branch new-branch",
        "git tag v1",
        "git config user.name x",
        "git logout",
        "git checkout .",
        "git stash",
        "git -C /tmp status",
        "git remote add x y",
        "git fetch",
    ),
)
GIT_GLOBAL_FLAGS = frozenset({"--no-pager", "-P", "--no-replace-objects", "--literal-pathspecs"})
# Options any git subcommand may accept (log and diff options reach many of them) that
# write a file, run a program or reach out.
GIT_ALWAYS_DENIED = frozenset({
    "--output", "--ext-diff", "--textconv", "--open-files-in-pager", "-O", "--exec",
    "--upload-pack", "--receive-pack", "--no-index", "--contents",
})  # fmt: skip

GREP = Program(
    "searches text",
    pattern_first=True,
    deny=frozenset({"-R", "--dereference-recursive"}),  # follows symlinks out
    file_options=frozenset({"-f", "--file"}),
    low=("grep -rn TODO .", "grep -c x a.txt", "grep -n 'a/b' src/x.py"),
    high=("grep -r x /etc", "grep -e x -r ../other", "grep -R x .", "grep -f /etc/passwd a.txt"),
)

READ_ONLY: dict[str, Program] = {
    "ls": Program("lists files", low=("ls -la src", "ls *.py"), high=("ls > out.txt",)),
    "cat": Program(
        "prints files",
        low=("cat README.md", "cat a | head"),
        high=("cat <(curl x)", "cat ../outside.txt", "cat ~/.ssh/id_rsa"),
    ),
    "head": Program("prints the start of files", low=("head -n 20 a.py",)),
    "tail": Program("prints the end of files", low=("tail -5 log.txt",)),
    "wc": Program("counts", low=("wc -l *.py",)),
    "nl": Program("numbers lines"),
    "grep": GREP,
    "egrep": GREP,
    "fgrep": GREP,
    "rg": Program(
        "searches text",
        pattern_first=True,
        deny=frozenset(
            {"--pre", "--pre-glob", "--hostname-bin", "--search-zip", "-z", "-L", "--follow"}
        ),
        file_options=frozenset({"-f", "--file", "--ignore-file"}),
        low=("rg -n foo src",),
        high=("rg --pre ./evil foo", "rg -L secret", "rg -f /etc/passwd src"),
    ),
    "find": Program(
        "finds files",
        deny=frozenset(
            {
                "-exec",
                "-execdir",
                "-ok",
                "-okdir",
                "-delete",
                "-fprint",
                "-fprint0",
                "-fprintf",
                "-fls",
                "-L",
                "-follow",
            }
        ),
        globs=False,
        options_end_at_double_dash=False,
        low=("find . -name '*.py'", "find src -type f -newer a.txt"),
        high=(
            "find . -exec rm {} ;",
            "find . -delete",
            "find . -fprint out",
            "find . -name *.py",
            "find -- . -delete",
            "find -L . -name x",
        ),
    ),
    "sed": Program(
        "prints lines",
        pattern_first=True,
        check=_sed_check,
        globs=False,
        low=("sed -n 1,5p a.txt", "sed -n '/start/,/end/p' a.txt"),
        high=("sed -i s/a/b/ f", "sed s/a/b/ f", "sed -n 'w out' f", "sed -n 1e f", "sed -ni p f"),
    ),
    "sort": Program(
        "sorts",
        deny=frozenset({"--output", "--compress-program"}),
        letters="o",
        high=(
            "sort -o out.txt in.txt",
            "sort -uo out in",
            "sort --outp=out in",
            "sort --compress-prog=sh in",
        ),
    ),
    "uniq": Program(
        "drops repeats",
        max_operands=1,
        globs=False,  # a glob could expand into a second operand: the output file
        high=("uniq in.txt out.txt", "uniq -- a.txt -out", "uniq *.txt"),
    ),
    "cut": Program("cuts columns"),
    "tr": Program("translates characters"),
    "column": Program("formats columns"),
    "comm": Program("compares sorted files"),
    "diff": Program(
        "compares files", deny=frozenset({"--to-file", "--from-file"}), low=("diff -u a.txt b.txt",)
    ),
    "cmp": Program("compares files"),
    "file": Program(
        "tells file types",
        deny=frozenset({"-C", "--compile"}),
        letters="C",
        file_options=frozenset({"-m", "--magic-file"}),
        high=("file -Cm magic", "file -m /etc/magic x"),
    ),
    "stat": Program("shows file status"),
    "du": Program("shows disk usage"),
    "df": Program("shows free space"),
    "tree": Program("shows a tree", deny=frozenset({"-o", "--fromfile"}), globs=False),
    "basename": Program("strips directories"),
    "dirname": Program("strips file names"),
    "realpath": Program("resolves paths"),
    "readlink": Program("reads links"),
    "pwd": Program("prints the directory"),
    "echo": Program(
        "prints its arguments",
        paths=False,
        low=('echo "hello world"', "echo /etc/passwd"),
        high=("echo $(whoami)", "echo `id`", "echo hi > ~/.bashrc"),
    ),
    "printf": Program("prints", deny=frozenset({"-v"}), paths=False),
    "sleep": Program("waits", paths=False, low=("sleep 1",)),
    "true": Program(),
    "false": Program(),
    "which": Program("finds programs"),
    "whoami": Program(),
    "id": Program(),
    "uname": Program(),
    "date": Program(
        "prints the date",
        deny=frozenset({"-s", "--set"}),
        letters="s",
        check=lambda args: next(
            (f"`date {a}` sets the clock" for a in _operands(args) if not a.startswith("+")), None
        ),
        low=("date +%Y-%m-%d", "date -u"),
        high=("date -s 2020-01-01", "date --se=2020-01-01", "date 0101000070"),
    ),
    "md5sum": Program("hashes", deny=frozenset({"-c", "--check"})),
    "sha1sum": Program("hashes"),
    "sha256sum": Program("hashes"),
    "jq": Program(
        "queries JSON",
        pattern_first=True,
        deny=frozenset({"--rawfile", "--slurpfile"}),
        file_options=frozenset({"-f", "--from-file", "-L"}),
        low=("jq .name package.json",),
        high=("jq -f /etc/passwd",),
    ),
    "git": GIT,
}

# Never low, whatever their arguments: they run other programs or reach the network.
WRAPPERS = frozenset({"env", "xargs", "timeout", "nice", "nohup", "sudo", "doas", "su", "exec",
                      "eval", "bash", "sh", "zsh", "dash", "fish", "python", "python3", "node",
                      "perl", "ruby", "command", "builtin", "time", "watch", "strace", "source",
                      "."})  # fmt: skip
NETWORK = frozenset({
    "curl", "wget", "nc", "ncat", "netcat", "ssh", "scp", "sftp", "rsync", "ping", "dig",
    "nslookup", "host", "telnet", "ftp", "socat", "openssl",
})  # fmt: skip


def _denied_flag(flag: str, deny: frozenset[str]) -> str | None:
    """The denied option `flag` stands for, exactly or as a GNU-style abbreviation
    (`--outp` is `--output`)."""
    if flag in deny:
        return flag
    if flag.startswith("--") and len(flag) > 3:
        return next((d for d in deny if d.startswith("--") and d.startswith(flag)), None)
    return None


def _flag_problem(program: Program, name: str, args: list[str]) -> str | None:
    for arg in args:
        if arg == "--" and program.options_end_at_double_dash:
            break
        if not arg.startswith("-") or arg == "-" or arg == "--":
            continue
        denied = _denied_flag(arg.split("=", 1)[0], program.deny)
        if denied:
            return f"`{name} {denied}` writes, runs a program or reaches out"
        if program.letters and not arg.startswith("--"):
            bad = set(arg[1:]) & set(program.letters)
            if bad:
                return f"`{name} -{''.join(sorted(bad))}` writes, runs a program or reaches out"
    if program.max_operands is not None:
        operands = _operands(args)
        if len(operands) > program.max_operands:
            return f"`{name}` with {len(operands)} operands writes the last one"
    if program.check is not None:
        return program.check(args)
    return None


def _operands(args: list[str]) -> list[str]:
    operands, options_done = [], False
    for arg in args:
        if arg == "--" and not options_done:
            options_done = True
        elif options_done or not arg.startswith("-") or arg == "-":
            operands.append(arg)
    return operands


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
    while args and args[0].startswith("-"):  # git's global options come first
        if args[0] not in GIT_GLOBAL_FLAGS:
            return f"`{name} {args[0]}` changes how {name} runs"
        args.pop(0)
    if not args:
        return f"`{name}` without a subcommand"
    sub = program.subcommands.get(args[0])
    if sub is None:
        return f"`{name} {args[0]}` is not a read-only subcommand"
    sub = replace(sub, deny=sub.deny | GIT_ALWAYS_DENIED, letters=sub.letters + "O")
    return _flag_problem(sub, f"{name} {args[0]}", args[1:])


def path_operands(command: SimpleCommand) -> list[tuple[str, bool]]:
    """The arguments that may name files, each with whether it is an unquoted glob:
    operands, option values after `=`, and the values of options that read a file
    (`grep -f FILE`) — but not the first operand of programs whose first operand is a
    pattern or script (unless the pattern came with -e)."""
    program = READ_ONLY.get(command.program) or Program()
    if not program.paths:
        return []
    argv, globs = command.argv, command.has_glob
    skip_pattern = program.pattern_first and not any(
        a == "-e" or a.startswith("--regexp") for a in argv[1:]
    )
    values: list[tuple[str, bool]] = []
    index, options_done = 1, False
    while index < len(argv):
        arg, glob = argv[index], globs[index]
        index += 1
        if arg == "--" and not options_done:
            options_done = True
            continue
        if arg.startswith("-") and arg != "-" and not options_done:
            flag, _, attached = arg.partition("=")
            file_option = next((f for f in program.file_options if arg.startswith(f)), None)
            if file_option is not None and not file_option.startswith("--"):
                attached = arg[len(file_option) :]  # -fFILE
            if attached:
                values.append((attached, glob))
            elif (file_option or flag in program.file_options) and index < len(argv):
                values.append((argv[index], globs[index]))
                index += 1
            continue
        if skip_pattern:
            skip_pattern = False
            continue
        values.append((arg, glob))
    return values
