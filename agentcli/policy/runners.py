"""Programs that are every program (security.md §30, §33).

What some commands run is decided by something no rule can read: a program text or a
script (interpreters, `./build.sh`), the project's own files (build tools, test runners,
package managers' scripts and installs, packages fetched by name), commands taken from
their input or their options (editors, pagers, debuggers, database shells, terminal
multiplexers), a shell builtin's string or a variable's name (`trap 'cmd' EXIT`,
`printf -v 'a[$(cmd)]'`), a variable set for them (`BASH_ENV=x bash`), a library they
load. Under a deny rule such a command counts as running every program: `hidden_in(argv)`
says why, and which word is to blame, so that an allow rule's wildcard never covers it.

Options that name a program to run are agentcli.policy.program_options; wrappers, whose
arguments are a command the rules can still read, are agentcli.policy.wrappers."""

from __future__ import annotations

import os
import re

from agentcli.policy.program_options import config_reads, git_subcommand_index, runs_program
from agentcli.policy.shell_parse import UNKNOWN
from agentcli.records import dataclass


@dataclass(frozen=True, slots=True)
class Hidden:
    """Why a command may run any program; `index`: the argv word to blame (None: the
    program itself, which an allow rule that names it still allows)."""

    reason: str
    index: int | None = None


# Interpreters: any use but asking their version runs a program text or script.
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
        "expect",
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
        "irb",
        "pry",
        "pydoc",
        "pydoc3",  # imports the modules it documents, from the working directory too
        "source",
        ".",
    }
)
_PYTHON_VERSIONED = re.compile(r"^(python|pypy|pydoc)\d+(\.\d+)*$")
# Programs with a command language of their own that runs shell commands (`:!cmd`,
# `!cmd`, `.shell`, `run-shell`), taken from options, files or their input.
COMMAND_LANGUAGES = frozenset(
    {
        "ed",
        "red",
        "ex",
        "vi",
        "vim",
        "nvim",
        "view",
        "rview",
        "rvim",
        "vimdiff",
        "gvim",
        "evim",
        "emacs",
        "emacsclient",
        "nano",
        "rnano",
        "pico",
        "joe",
        "mg",
        "micro",
        "less",
        "more",
        "most",
        "pg",
        "man",
        "info",
        "pinfo",
        "gdb",
        "lldb",
        "dc",
        "sqlite3",
        "mysql",
        "mariadb",
        "psql",
        "ftp",
        "lftp",
        "gnuplot",
        "octave",
        "tmux",
        "screen",
        "byobu",
        "at",
        "batch",
        "crontab",
        "run-parts",
    }
)
# Only asking a version or help (not `-v`, verbose to many, nor `help`, a make target).
_ASKING = frozenset({"--version", "-V", "--help"})
_INTERPRETER_ASKING = _ASKING | {"-h", "-v"}
# Programs that run what the project's files say (a Makefile, package.json's scripts,
# setup.py, build.rs, conftest.py, a Dockerfile...) or a package fetched by name, with the
# first words that run none of it ("" for no arguments at all).
_BUILD = frozenset()
_LISTING = frozenset({"", "list", "show", "info", "help", "--version", "-V", "--help"})
PROJECT_RUNNERS: dict[str, frozenset[str]] = {
    **dict.fromkeys(
        (
            "make",
            "gmake",
            "bmake",
            "ninja",
            "scons",
            "just",
            "rake",
            "ant",
            "mvn",
            "mvnw",
            "gradle",
            "gradlew",
            "sbt",
            "lein",
            "bazel",
            "bazelisk",
            "buck",
            "buck2",
            "meson",
            "cmake",
            "ctest",
            "waf",
            "tox",
            "nox",
            "pytest",
            "py.test",
            "jest",
            "vitest",
            "mocha",
            "ava",
            "karma",
            "playwright",
            "cypress",
            "phpunit",
            "rspec",
            "behave",
            "pre-commit",
            "lefthook",
            "mix",
            "rebar3",
            "cabal",
            "stack",
            "dune",
            "zig",
            "swift",
            "dotnet",
            "msbuild",
            "xcodebuild",
            "ansible",
            "ansible-playbook",
            "vagrant",
            "packer",
            "nix-build",
            "nix-shell",
            "docker-compose",
            "podman-compose",
            "eslint",
            "prettier",
            "webpack",
            "vite",
            "rollup",
            "parcel",
            "next",
            "nuxt",
            "turbo",
            "nx",
            "lerna",
            "sphinx-build",
            "mkdocs",
            "jekyll",
            "jupyter",
            "npx",
            "bunx",
            "pnpx",
            "uvx",
            "pipx",
            "dpkg-buildpackage",
            "debuild",
            "rpmbuild",
            "makepkg",
        ),
        _BUILD,
    ),
    "npm": frozenset(
        {
            *("", "ls", "list", "ll", "la", "view", "v", "info", "show", "outdated"),
            *("search", "whoami", "ping", "root", "prefix", "fund", "explain", "why"),
            *("query", "help", "doctor", "-v", "--version", "-h", "--help"),
        }
    ),
    "pnpm": frozenset({"", "ls", "list", "why", "outdated", "root", "help", "-v", "--version"}),
    "yarn": frozenset({"info", "why", "outdated", "help", "-v", "--version"}),
    **dict.fromkeys(
        ("pip", "pip3"),
        frozenset(
            {
                *("", "list", "show", "freeze", "check", "config", "debug", "help", "cache"),
                *("index", "inspect", "hash", "search", "uninstall", "-V", "--version"),
            }
        ),
    ),
    "uv": frozenset({"", "--version", "-V", "version", "help", "cache", "python"}),
    **dict.fromkeys(
        ("poetry", "pdm", "hatch", "rye", "pipenv", "conda", "mamba", "micromamba"), _LISTING
    ),
    "cargo": frozenset(
        {
            *("", "--version", "-V", "version", "help", "metadata", "tree", "search"),
            *("locate-project", "pkgid", "verify-project", "read-manifest", "clean", "new"),
            *("init", "update", "fetch", "generate-lockfile", "owner", "yank", "info"),
            *("login", "logout", "vendor"),
        }
    ),
    # `go build` runs no code of the project (cgo's flags are checked by go itself); run,
    # test, generate, vet and tool do, and `go env -w` changes what later builds run.
    "go": frozenset(
        {"", "version", "list", "doc", "help", "fmt", "mod", "clean", "work", "build"}
        | {"install", "get"}
    ),
    **dict.fromkeys(
        ("docker", "podman", "nerdctl"),
        frozenset(
            {
                *("", "ps", "images", "version", "info", "inspect", "logs", "history"),
                *("search", "top", "port", "diff", "stats", "events", "--version", "help"),
            }
        ),
    ),
    "kubectl": frozenset(
        {
            *("", "get", "describe", "logs", "version", "explain", "api-resources"),
            *("api-versions", "cluster-info", "top", "help"),
        }
    ),
    **dict.fromkeys(
        ("terraform", "tofu"),
        frozenset({"", "version", "-version", "fmt", "providers", "output", "show", "graph"})
        | {"workspace", "state", "help"},
    ),
    "dpkg": frozenset(
        {
            *("", "-l", "--list", "-L", "--listfiles", "-s", "--status", "-S", "--search"),
            *("-p", "--print-avail", "-c", "--contents", "-I", "--info", "--version"),
            *("--compare-versions", "--print-architecture", "--get-selections", "--help"),
            *("-V", "--verify", "--audit", "-C"),
        }
    ),
    **dict.fromkeys(
        ("apt", "apt-get", "aptitude"),
        frozenset(
            {
                *("", "list", "show", "search", "policy", "depends", "rdepends"),
                *("changelog", "showsrc", "--version", "-v", "help"),
            }
        ),
    ),
    "gem": frozenset(
        {
            *("", "list", "search", "info", "query", "specification", "contents"),
            *("environment", "help", "--version", "-v", "which", "dependency", "outdated"),
        }
    ),
    **dict.fromkeys(
        ("bundle", "bundler"),
        frozenset({"", "list", "show", "info", "outdated", "version", "--version", "help"}),
    ),
    "composer": frozenset(
        {
            *("", "show", "info", "outdated", "licenses", "depends", "why", "prohibits"),
            *("why-not", "validate", "diagnose", "--version", "-V", "help", "list", "search"),
        }
    ),
}

# --- shell builtins -----------------------------------------------------------------
# Builtins that run a string as commands later or elsewhere, or change what a name runs.
_RUNNING_BUILTINS = {
    "trap": "`trap` runs its string as commands when the signal comes",
    "fc": "`fc` runs commands from the history, through an editor",
    "let": "`let` evaluates arithmetic, whose array subscripts can run commands",
    "enable": "`enable` loads or replaces builtins",
    "shopt": "`shopt` changes how the shell reads later commands (aliases, say)",
    "alias": "an alias makes a name run other commands",
}
# Builtins whose option runs a command: `hash -p PATH name`, `jobs -x cmd`, `bind -x`,
# `complete -C cmd`, `compgen -C cmd` / `-F function`, `mapfile -C callback`.
_RUNNING_OPTIONS = {
    "hash": "p",
    "jobs": "x",
    "bind": "x",
    "complete": "CF",
    "compgen": "CF",
    "mapfile": "C",
    "readarray": "C",
}
# Builtins that take variable names, whose array subscripts (`a[$(cmd)]`) bash expands.
_NAME_BUILTINS = frozenset(
    {"read", "mapfile", "readarray", "printf", "wait", "getopts", "unset", "test", "["}
)
DECLARATIONS = frozenset({"declare", "typeset", "local", "export", "readonly"})

# Variables that make no program run anything else (the rest can: BASH_ENV, ENV, PATH,
# LD_PRELOAD, PAGER, EDITOR, GIT_*, PS4, HOME...). Lower-case names are a script's own.
_INERT_VARIABLES = frozenset(
    {
        "LANG",
        "LANGUAGE",
        "TZ",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "COLUMNS",
        "LINES",
        "TERM",
        "CI",
        "DEBUG",
        "VERBOSE",
        "TMPDIR",
        "SOURCE_DATE_EPOCH",
        "RUST_LOG",
        "RUST_BACKTRACE",
        "NODE_ENV",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
    }
)
_LOWER_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_ASSIGNMENT = re.compile(r"^([^=\-][^=]*)=")  # NAME=VALUE as env(1) reads it
# Wrappers that set variables for the command they run, and their options with a value.
_ENV_SETTERS = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "-R"}),
    "doas": frozenset({"-u", "-C"}),
}
SYSTEM_DIRECTORIES = frozenset(
    {"/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"}
)


def inert_variable(name: str) -> bool:
    """Whether setting this variable can make no program run another."""
    if _LOWER_NAME.match(name):
        return True
    return name in _INERT_VARIABLES or (name.startswith("LC_") and name[3:].isupper())


def variable_problem(name: str) -> str | None:
    if inert_variable(name):
        return None
    return f"`{name}` set for a command can make it run other programs"


def hidden_in(argv: tuple[str, ...]) -> Hidden | None:
    """Why this one command may run any program (its wrappers aside), or None."""
    word = argv[0]
    program = word.rsplit("/", 1)[-1]
    args = argv[1:]
    if UNKNOWN in word:
        return Hidden("the program's name is decided only when it runs", 0)
    if "/" in word and word.rsplit("/", 1)[0] not in SYSTEM_DIRECTORIES and _may_run(word):
        return Hidden(f"`{word}` is a script named by its path, which no rule can read")
    if args and all(a in _ASKING for a in args):
        return None
    return (
        _runs_its_own(program, args)
        or _builtin(program, args)
        or _variables(program, args)
        or _script(program, args)
        or _git(args if program == "git" else None)
        or _option(argv)
    )


def runs_its_words(argv: tuple[str, ...]) -> bool:
    """Whether what this command runs is in its own words or input (an interpreter, an
    editor, a script, a sed `e`), so that a rule for it should name it exactly."""
    hidden = hidden_in(argv)
    if hidden is None:
        return False
    program = argv[0].rsplit("/", 1)[-1]
    return (
        hidden.index is not None
        or "/" in argv[0]
        or program in INTERPRETERS
        or program in COMMAND_LANGUAGES
        or bool(_PYTHON_VERSIONED.match(program))
    )


def _may_run(path: str) -> bool:
    """Whether a path may name a program: a relative one always (where it is depends on
    where it runs), an absolute one unless it is there and cannot run (`/dev/null`, `/`:
    a wrapper's option value rather than its command)."""
    if not path.startswith("/") or not os.path.lexists(path):
        return True
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _runs_its_own(program: str, args: tuple[str, ...]) -> Hidden | None:
    if program in INTERPRETERS or _PYTHON_VERSIONED.match(program):
        if args and all(a in _INTERPRETER_ASKING for a in args):
            return None
        return Hidden(f"`{program}` runs a program text or script no rule can read")
    if program in COMMAND_LANGUAGES:
        return Hidden(f"`{program}` runs commands of its own language, which can run any")
    inert = PROJECT_RUNNERS.get(program)
    if inert is None:
        return None
    first = args[0] if args else ""
    if first in inert:
        return None
    doing = f"{program} {first}" if first and not first.startswith("-") else program
    return Hidden(f"`{doing}` runs what the project's files or a package say")


def _builtin(program: str, args: tuple[str, ...]) -> Hidden | None:
    if program in _RUNNING_BUILTINS and args:
        return Hidden(_RUNNING_BUILTINS[program], 1)
    letters = _RUNNING_OPTIONS.get(program)
    if letters:
        for i, arg in enumerate(args, 1):
            if arg == "--":
                break
            if arg[:1] == "-" and any(c in letters for c in arg[1:]):
                return Hidden(f"`{program} {arg}` runs a command", i)
    if program == "set":
        for i, arg in enumerate(args, 1):
            keyword = arg == "keyword" and args[i - 2 : i - 1] in (("-o",), ("+o",))
            if keyword or (arg[:1] == "-" and arg[1:2] != "-" and "k" in arg):
                return Hidden("`set -k` turns later arguments into variables", i)
    if program in _NAME_BUILTINS or program in DECLARATIONS:
        for i in _named(program, args):
            reason = _name_problem(program, args[i - 1])
            if reason is not None:
                return Hidden(reason, i)
    if program in DECLARATIONS:
        return _declaration(program, args)
    return None


def _name_problem(program: str, word: str) -> str | None:
    """A variable name bash evaluates: a subscript is arithmetic (`a[x]` runs what x holds,
    `b[$(cmd)]`), a declaration's `b=(...)` is parsed again as a compound assignment, and
    a name decided only when it runs (a glob like `a[x]` that matched nothing, `$n`) may
    be either."""
    if UNKNOWN in word:
        return f"`{program}` takes a variable name decided only when it runs"
    if "[" in word or (program in DECLARATIONS and "=(" in word):
        return f"`{program}` expands the subscript in {word!r}"
    return None


# `read`'s options whose value is not a variable name (`-a NAME` is one).
_READ_SKIP = frozenset((option,) for option in ("-d", "-i", "-n", "-N", "-p", "-t", "-u"))


def _named(program: str, args: tuple[str, ...]) -> list[int]:
    """The argv indexes of the words a builtin reads as variable names (all, when unsure)."""
    if program == "printf":
        return [i + 2 for i, a in enumerate(args[:-1]) if a == "-v"]
    if program in ("test", "["):
        return list(range(1, len(args) + 1)) if {"-v", "-R"} & set(args) else []
    if program == "read":
        return [i for i in range(1, len(args) + 1) if args[i - 2 : i - 1] not in _READ_SKIP]
    return list(range(1, len(args) + 1))


def _declaration(program: str, args: tuple[str, ...]) -> Hidden | None:
    for i, arg in enumerate(args, 1):
        if arg[:1] in "-+" and any(c in "ni" for c in arg[1:]):
            return Hidden(f"`{program} {arg}` evaluates names or arithmetic later", i)
        name, eq, _ = arg.partition("=")
        problem = variable_problem(name) if eq and arg[:1] not in "-+" else None
        if problem:
            return Hidden(problem, i)
    return None


def _variables(program: str, args: tuple[str, ...]) -> Hidden | None:
    """`env BASH_ENV=x bash -c true`: a variable set by a wrapper, as the shell would."""
    valued = _ENV_SETTERS.get(program)
    if valued is None:
        return None
    index = 0
    while index < len(args):
        arg = args[index]
        match = _ASSIGNMENT.match(arg)
        if match:
            problem = variable_problem(match.group(1))
            if problem:
                return Hidden(problem, index + 1)
        elif not arg.startswith("-"):
            return None  # the command starts here
        elif arg in valued:
            index += 1
        index += 1
    return None


def _script(program: str, args: tuple[str, ...]) -> Hidden | None:
    """awk and sed programs that run commands (`system()`, `| "cmd"`, sed's `e`)."""
    from agentcli.policy.scripts import awk_script_runs, sed_script_runs

    if program in ("awk", "gawk", "mawk", "nawk", "busybox-awk"):
        return _script_problem(program, args, awk_script_runs, _AWK_OPTIONS)
    if program in ("sed", "gsed"):
        if any(a == "--sandbox" for a in args):
            return None  # GNU sed refuses e, w and r
        return _script_problem(program, args, sed_script_runs, _SED_OPTIONS)
    return None


@dataclass(frozen=True, slots=True)
class _ScriptOptions:
    code: frozenset[str]  # options whose value is the program text
    files: frozenset[str]  # options whose value is a program file (or code loaded)
    short_values: str  # short options with a value
    long_values: frozenset[str]


_AWK_OPTIONS = _ScriptOptions(
    code=frozenset({"-e", "--source"}),
    files=frozenset({"-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load"}),
    short_values="FvfeEil",
    long_values=frozenset(
        {"--field-separator", "--assign", "--file", "--source", "--exec", "--include"}
    )
    | {"--load"},
)
_SED_OPTIONS = _ScriptOptions(
    code=frozenset({"-e", "--expression"}),
    files=frozenset({"-f", "--file"}),
    short_values="efl",
    long_values=frozenset({"--expression", "--file", "--line-length"}),
)


def _script_problem(program: str, args: tuple[str, ...], runs, options: _ScriptOptions):  # type: ignore[no-untyped-def]
    from agentcli.policy.argv import matches, parse_options

    parsed = parse_options(
        list(args), short_values=options.short_values, long_values=options.long_values
    )
    sources: list[tuple[str, int]] = []
    for option in parsed.options:
        where = (option.value_index if option.value_index is not None else option.index) + 1
        if matches(option, options.files):
            return Hidden(f"`{program} {option.name}` runs a program from a file", where)
        if matches(option, options.code):
            sources.append((option.value or "", where))
    if not sources and parsed.operands:
        sources.append((args[parsed.operands[0]], parsed.operands[0] + 1))
    for text, where in sources:
        reason = runs(text)
        if reason:
            return Hidden(f"{program}: {reason}", where)
    return None


# --- git ------------------------------------------------------------------------------
# git's own subcommands; any other name is an alias or a `git-NAME` program.
GIT_COMMANDS = frozenset(
    {
        *("add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch"),
        *("bundle", "cat-file", "check-attr", "check-ignore", "check-mailmap"),
        *("check-ref-format", "checkout", "checkout-index", "cherry", "cherry-pick"),
        *("citool", "clean", "clone", "column", "commit", "commit-graph", "commit-tree"),
        *("config", "count-objects", "describe", "diff", "diff-files", "diff-index"),
        *("diff-tree", "fetch", "fetch-pack", "for-each-ref", "for-each-repo"),
        *("format-patch", "fsck", "gc", "get-tar-commit-id", "grep", "hash-object"),
        *("help", "index-pack", "init", "interpret-trailers", "log", "ls-files"),
        *("ls-remote", "ls-tree", "mailinfo", "mailsplit", "maintenance", "merge"),
        *("merge-base", "merge-file", "merge-index", "merge-tree", "mktag", "mktree"),
        *("mv", "name-rev", "notes", "pack-objects", "pack-refs", "patch-id"),
        *("prune", "prune-packed", "pull", "push", "range-diff", "read-tree", "rebase"),
        *("reflog", "remote", "repack", "replace", "rerere", "reset", "restore"),
        *("rev-list", "rev-parse", "revert", "rm", "shortlog", "show", "show-branch"),
        *("show-index", "show-ref", "sparse-checkout", "stash", "status", "stripspace"),
        *("submodule", "switch", "symbolic-ref", "tag", "unpack-file", "unpack-objects"),
        *("update-index", "update-ref", "update-server-info", "var", "verify-commit"),
        *("verify-pack", "verify-tag", "version", "whatchanged", "worktree"),
        *("write-tree", "init-db", "backfill", "replay", "diagnose", "bugreport"),
    }
)
# Subcommands that run a tool, a filter or commands given to them whatever their options.
GIT_RUNNERS = frozenset(
    {"difftool", "mergetool", "filter-branch", "instaweb", "send-email", "web--browse"}
    | {"hook", "daemon", "credential", "p4", "svn", "cvsimport", "cvsserver", "archimport"}
    | {"quiltimport", "request-pull", "imap-send", "http-backend", "upload-pack"}
    | {"receive-pack", "shell", "sh-setup", "mergetool--lib", "filter-repo"}
)


def _git(args: tuple[str, ...] | None) -> Hidden | None:
    if args is None:
        return None
    argv = ("git", *args)
    found = git_subcommand_index(argv)
    if isinstance(found, str):
        return Hidden(f"`git {found}` changes what git runs", argv.index(found))
    if found >= len(argv):
        return None
    subcommand = argv[found]
    if subcommand == "config" and not config_reads(argv[found + 1 :]):
        return Hidden("`git config` can set programs that later git commands run", found)
    if subcommand in GIT_RUNNERS:
        return Hidden(f"`git {subcommand}` runs the tools or commands it is given", found)
    if subcommand not in GIT_COMMANDS:
        return Hidden(f"`git {subcommand}` may be an alias or a git-{subcommand} program", found)
    return None


def _option(argv: tuple[str, ...]) -> Hidden | None:
    program = argv[0].rsplit("/", 1)[-1]
    for index in range(1, len(argv)):
        if runs_program(argv, index):
            return Hidden(f"`{program} {argv[index]}` runs another program", index)
    return None
