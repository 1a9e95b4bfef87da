"""Arguments that make a program run another program: `git push --receive-pack=PROG`,
`tar --to-command=PROG`, `zip -TT CMD`, `gdb -ex '!cmd'`, `vim -c ':!cmd'`, `gcc -wrapper
PROG`, `split --filter=CMD`, `ssh -o ProxyCommand=CMD`, `make --eval=...`, `find -exec` —
the exec-like options that public catalogues of shell escapes (GTFOBins) list by program.
Under a deny rule a command with one counts as running every program
(agentcli.policy.runners); an allow rule's wildcard never covers one
(agentcli.policy.rules.command_allowed_by), so `git push *`, remembered for `git push
origin main`, does not also allow `git push --receive-pack=...`.

Long options are matched by name and by every prefix of it (GNU and git accept unique
abbreviations: `--rec=PROG`); short ones anywhere in a bundle (`-vuPROG`); single-dash
long options (`-ex`, `-wrapper`) by name, alone or with their value attached."""

from __future__ import annotations

import re

from agentcli.records import dataclass

# Any program: long options whose name says they name a program to run (not `--no-pager`).
_GENERIC_LONG = re.compile(
    r"^(?!no-)(exec|rsh|pager|editor|shell|command|run|[\w-]*-(command|cmd|program|prog|pack|"
    r"exec|shell|hook|helper|editor|pager|script))$"
)


@dataclass(frozen=True, slots=True)
class Runs:
    """How one program's arguments can make it run another program."""

    longs: frozenset[str] = frozenset()  # --name, or an abbreviation of it
    shorts: str = ""  # -x, anywhere in a bundle of short options
    words: frozenset[str] = frozenset()  # exact words, single-dash long options: -ex, -TT
    plus: bool = False  # `+cmd`: an editor's or pager's command to run at start
    assignments: bool = False  # NAME=value arguments change the commands it runs (make)
    contains: tuple[str, ...] = ()  # any argument holding one of these (case-insensitive)
    prefixes: tuple[str, ...] = ()  # any argument starting so (a compiler's @FILE)
    operands: bool = False  # every operand is a command (tmux new 'cmd', crontab FILE)
    first_bundle: bool = False  # tar's first word is a bundle without a dash (`tar xIf`)
    options: frozenset[str] = frozenset()  # long options of its own that only look like
    # abbreviations of one above (tar's `--checkpoint` is not `--checkpoint-action`)


_TAR = Runs(
    longs=frozenset(
        {
            "use-compress-program",
            "to-command",
            "checkpoint-action",
            "info-script",
            "new-volume-script",
            "rsh-command",
            "rmt-command",
        }
    ),
    shorts="IF",
    first_bundle=True,
    options=frozenset({"checkpoint", "to-stdout", "info"}),
)
_VIM = Runs(longs=frozenset({"cmd"}), shorts="cSsuU", plus=True)
_COMPILER = Runs(
    words=frozenset({"-wrapper", "-fplugin", "-B", "-specs", "--specs"}), prefixes=("@",)
)
_GDB_WORDS = frozenset(
    {"-ex", "-x", "-iex", "-ix", "-eval-command", "-command", "-init-command", "-init-eval-command"}
)
_SSH = Runs(shorts="oFS")
_PROGRAMS: dict[str, Runs] = {
    "rsync": Runs(longs=frozenset({"rsh", "rsync-path"}), shorts="e"),
    "tar": _TAR,
    "cpio": Runs(longs=frozenset({"rsh-command", "rmt-command"})),
    "ssh": _SSH,
    "scp": _SSH,
    "sftp": Runs(shorts="oFSD"),
    "ssh-keygen": Runs(shorts="D"),
    "zip": Runs(longs=frozenset({"unzip-command"}), words=frozenset({"-TT"})),
    "man": Runs(longs=frozenset({"pager", "html"}), shorts="PH"),
    "npm": Runs(longs=frozenset({"script-shell"})),
    "pytest": Runs(shorts="p"),
    "split": Runs(longs=frozenset({"filter"})),
    "sort": Runs(longs=frozenset({"compress-program"})),
    "install": Runs(longs=frozenset({"strip-program"})),
    **dict.fromkeys(
        ("make", "gmake"),
        Runs(
            longs=frozenset({"eval", "file", "makefile", "include-dir"}),
            shorts="EfI",
            assignments=True,
        ),
    ),
    "cmake": Runs(shorts="PCED"),
    "gdb": Runs(longs=frozenset(w[1:] for w in _GDB_WORDS) | {"args"}, words=_GDB_WORDS),
    "lldb": Runs(
        longs=frozenset({"one-line", "one-line-before-file", "source", "source-before-file"})
        | {"one-line-on-crash", "source-on-crash"},
        shorts="oOsSkK",
    ),
    **dict.fromkeys(
        ("vim", "vi", "nvim", "view", "ex", "rvim", "rview", "vimdiff", "gvim", "evim"), _VIM
    ),
    "emacs": Runs(longs=frozenset({"eval", "execute", "load", "funcall", "script"}), shorts="lf"),
    "nano": Runs(longs=frozenset({"speller", "rcfile"}), shorts="s"),
    **dict.fromkeys(
        ("less", "more"),
        Runs(
            longs=frozenset({"lesskey-file", "lesskey-src", "lesskey-content"}),
            shorts="k",
            plus=True,
        ),
    ),
    "sqlite3": Runs(
        words=frozenset({"-cmd", "-init"}), contains=(".sh", ".system", ".output", ".once", ".load")
    ),
    "psql": Runs(longs=frozenset({"command", "file"}), shorts="cf"),
    **dict.fromkeys(
        ("mysql", "mariadb"),
        Runs(longs=frozenset({"execute", "pager", "init-command"}), shorts="e"),
    ),
    "dc": Runs(longs=frozenset({"expression", "file"}), shorts="ef"),
    "lftp": Runs(shorts="cf"),
    "tmux": Runs(shorts="cf", operands=True),
    "screen": Runs(shorts="c", operands=True),
    **dict.fromkeys(("at", "batch"), Runs(shorts="f", operands=True)),
    "crontab": Runs(operands=True),
    "run-parts": Runs(operands=True),
    **dict.fromkeys(("gcc", "cc", "g++", "c++", "clang", "clang++", "gfortran"), _COMPILER),
    "ld": Runs(words=frozenset({"-plugin", "--plugin"})),
    "go": Runs(
        longs=frozenset({"toolexec", "vettool"}),
        words=frozenset({"-toolexec", "-exec", "-vettool"}),
    ),
    "openssl": Runs(
        words=frozenset({"-engine", "-provider", "-provider-path", "-keygen_engine", "engine"})
    ),
    **dict.fromkeys(("nc", "netcat", "nc.traditional"), Runs(shorts="ec")),
    "ncat": Runs(longs=frozenset({"sh-exec", "lua-exec"}), shorts="ec"),
    "socat": Runs(contains=("exec:", "system:")),
    **dict.fromkeys(
        ("apt", "apt-get", "aptitude", "apt-cache"),
        Runs(longs=frozenset({"option", "config-file"}), shorts="oc"),
    ),
    "dpkg": Runs(longs=frozenset({"pre-invoke", "post-invoke", "status-logger"})),
    "kubectl": Runs(longs=frozenset({"kubeconfig"})),
}
# git subcommand -> (short letters, words) that run programs, beside the long options.
_GIT_LONG = frozenset(
    {
        "receive-pack",
        "upload-pack",
        "exec",
        "config",
        "config-env",
        "exec-path",
        "template",
        "extcmd",
        "tool",
        "open-files-in-pager",
        "ext-diff",
        "textconv",
        "strategy",
    }
)
_GIT: dict[str, tuple[str, frozenset[str]]] = {
    "clone": ("uc", frozenset()),
    "rebase": ("xs", frozenset()),
    "merge": ("s", frozenset()),
    "pull": ("s", frozenset()),
    "grep": ("O", frozenset()),
    "difftool": ("xt", frozenset()),
    "mergetool": ("t", frozenset()),
    "submodule": ("", frozenset({"foreach"})),
    "bisect": ("", frozenset({"run"})),
}
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_GIT_FLAGS = frozenset(
    {
        *("-p", "--paginate", "-P", "--no-pager", "--no-replace-objects", "--bare"),
        *("--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs"),
        *("--icase-pathspecs", "--no-optional-locks", "--no-advice", "--no-lazy-fetch"),
        *("--version", "--help", "--html-path", "--man-path", "--info-path"),
    }
)
_GIT_VALUED = frozenset({"-C", "--git-dir", "--work-tree", "--namespace", "--list-cmds"})


def git_subcommand_index(argv: tuple[str, ...]) -> int | str:
    """Where git's subcommand is in argv (len(argv) when there is none), or the global
    option that changes what git runs (`-c`, `--config-env`, `--exec-path`, or one not
    known)."""
    index = 1
    while index < len(argv) and argv[index].startswith("-"):
        arg = argv[index]
        if arg in _GIT_FLAGS or (arg.split("=", 1)[0] in _GIT_VALUED and "=" in arg):
            index += 1
        elif arg in _GIT_VALUED:
            index += 2
        else:
            return arg
    return min(index, len(argv))


_CONFIG_READS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color"}
    | {"--get-colorbool"}
)
_CONFIG_WRITES = frozenset(
    {"--add", "--replace-all", "--unset", "--unset-all", "--rename-section", "--edit", "-e"}
    | {"--remove-section", "set", "unset", "rename-section", "remove-section", "edit"}
)


def config_reads(args: tuple[str, ...]) -> bool:
    """`git config --get user.name`, `git config list`: reading, writing nothing."""
    if _CONFIG_WRITES & set(args):
        return False
    return bool(_CONFIG_READS & set(args)) or (bool(args) and args[0] in ("get", "list"))


def _long_name(word: str) -> str:
    return word[2:].split("=", 1)[0]


def _abbreviates(name: str, names: frozenset[str]) -> bool:
    return bool(name) and any(full.startswith(name) for full in names)


def _single_dash(word: str, words: frozenset[str]) -> bool:
    """`-ex`, `-fplugin=x`, `-B./bin`: a word, with its value attached by `=` (or, for a
    one-letter option, directly)."""
    name = word.split("=", 1)[0]
    return name in words or any(len(w) == 2 and word.startswith(w) for w in words)


def runs_program(argv: tuple[str, ...], index: int) -> bool:
    """Whether argv[index] makes argv's program run another program."""
    program = argv[0].rsplit("/", 1)[-1]
    word = argv[index]
    if program == "find":
        return word in _FIND_EXEC
    if program == "git":
        return _git_runs_program(argv, index)
    runs = _PROGRAMS.get(program, Runs())
    lowered = word.lower()
    if any(needle in lowered for needle in runs.contains) or word.startswith(runs.prefixes):
        return True
    if _single_dash(word, runs.words):
        return True
    if runs.plus and word.startswith("+"):
        return True
    if runs.assignments and re.match(r"^[A-Za-z_][A-Za-z0-9_.]*[:+?!]?=", word):
        return True
    if word.startswith("--"):
        name = _long_name(word)
        own = name in runs.options
        return bool(_GENERIC_LONG.match(name)) or (not own and _abbreviates(name, runs.longs))
    if word.startswith("-") and len(word) > 1:
        return any(letter in runs.shorts for letter in word[1:])
    if index == 1 and runs.first_bundle:
        return any(letter in runs.shorts for letter in word)
    return runs.operands


def _git_runs_program(argv: tuple[str, ...], index: int) -> bool:
    found = git_subcommand_index(argv)
    if isinstance(found, str):
        return index >= argv.index(found)  # `-c`, `--exec-path` and what they govern
    if index < found:
        return False  # harmless global options (`--no-pager`, `-C DIR`)
    subcommand = argv[found] if found < len(argv) else ""
    if subcommand == "config":
        return not config_reads(argv[found + 1 :])  # any key it sets can name a program
    shorts, words = _GIT.get(subcommand, ("", frozenset()))
    word = argv[index]
    if word in words:
        return True
    if index == found:
        return False
    if word.startswith("--"):
        name = _long_name(word)
        return bool(_GENERIC_LONG.match(name)) or _abbreviates(name, _GIT_LONG)
    if word.startswith("-") and len(word) > 1:
        return any(c in shorts for c in word[1:])
    return False
