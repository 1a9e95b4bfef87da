"""A repository's own configuration can make "read-only" git run programs or reach out.

`git status` runs `core.fsmonitor` and writes the index (which runs a `post-index-change`
hook), `git diff` runs `diff.external` and textconv drivers, anything that looks at the
work tree may run a `filter.*.clean` driver, `log.showSignature` runs gpg, and a partial
clone fetches missing objects over the network. A cloned or downloaded repository (an
untrusted workspace) can carry such settings, so a git command is read-only only when no
file git reads for it sets a key that matters to that subcommand.

The files are read as git reads them: its syntax (quotes, escapes, continued lines, a
UTF-8 byte order mark), `include.path` and `includeIf.*.path` followed, the worktree's
`config.worktree`, the common directory of a linked worktree (`commondir`), and each
submodule's own git directory (under `modules/`, or named by a `gitdir:` file). Keys that
matter only to commands never rated low here (credential helpers, ssh, editors, merge
drivers) are not read, nor are empty values: an empty command runs nothing. The user's
own global configuration is theirs and is not read.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from agentcli.records import dataclass

WORKTREE = frozenset({"status", "diff", "describe", "ls-files", "grep", "blame"})
INDEX_WRITERS = frozenset({"status", "diff", "describe"})  # refresh and write the index
DIFFS = frozenset({"diff", "stash"})  # external diff drivers run by default
TEXTCONV = frozenset({"diff", "log", "show", "blame", "stash"})
SIGNATURES = frozenset({"log", "show"})
# Subcommands that read no blob or tree, so a partial clone has nothing to fetch for them.
NO_OBJECTS = frozenset(
    {"rev-parse", "branch", "tag", "remote", "config", "worktree", "count-objects"}
)
_INCLUDE_DEPTH = 10  # git's own limit
_MAX_FILE = 1 << 20  # bytes read of one configuration file
# `git log` options that show no file contents: with only these, no textconv driver runs.
# Anything else (-p, --stat, -S, -G, --word-diff, -U5, ...) may compare contents.
_LOG_WITHOUT_CONTENTS = frozenset(
    {
        "--oneline",
        "-n",
        "--max-count",
        "--skip",
        "--format",
        "--pretty",
        "--graph",
        "--decorate",
        "--no-decorate",
        "--all",
        "--branches",
        "--tags",
        "--remotes",
        "--since",
        "--after",
        "--until",
        "--before",
        "--author",
        "--committer",
        "--grep",
        "--reverse",
        "--no-merges",
        "--merges",
        "--first-parent",
        "--abbrev-commit",
        "--abbrev",
        "--date",
        "--name-only",
        "--name-status",
        "--topo-order",
        "--date-order",
        "--color",
        "--no-color",
        "--left-right",
        "--boundary",
        "--parents",
        "--children",
        "--source",
        "-g",
        "--walk-reflogs",
        "--no-walk",
        "--count",
        "-i",
        "--regexp-ignore-case",
        "-E",
        "--extended-regexp",
        "-F",
        "--fixed-strings",
        "--all-match",
        "--invert-grep",
        "--ancestry-path",
        "--simplify-by-decoration",
        "--author-date-order",
        "-s",
        "--no-patch",
        "--relative-date",
        "--full-history",
        "--no-renames",
        "--cherry-pick",
        "--cherry-mark",
        "--use-mailmap",
        "--mailmap",
        "--no-use-mailmap",
        "--max-parents",
        "--min-parents",
        "--no-abbrev-commit",
        "--decorate-refs",
        "--decorate-refs-exclude",
        "--exclude",
    }
)


def _key(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern.replace(".", r"\.").replace("*", r"[^\n]*") + "$")


# Keys (lower-case; `*` is a subsection) whose value is a program git runs, with the
# subcommands that run it (None: any that shows output, as the pager does on a terminal).
PROGRAM_KEYS: tuple[tuple[re.Pattern[str], frozenset[str] | None], ...] = (
    (_key("core.fsmonitor"), WORKTREE),
    (_key("core.pager"), None),
    (_key("pager.*"), None),
    (_key("diff.external"), DIFFS),
    (_key("diff.*.command"), DIFFS),
    (_key("diff.*.textconv"), TEXTCONV),
    (_key("filter.*.clean"), WORKTREE),
    (_key("filter.*.process"), WORKTREE),
)
# Keys naming a file git reads for these subcommands: outside the workspace, it may echo
# its lines (`blame.ignoreRevsFile` dies quoting the first bad line).
FILE_KEYS: tuple[tuple[str, frozenset[str]], ...] = (
    ("blame.ignorerevsfile", frozenset({"blame"})),
    ("mailmap.file", frozenset({"log", "show", "shortlog", "blame"})),
    ("core.worktree", WORKTREE),
)
_TRUE = {"true", "yes", "on", "1"}
_BOOLEAN = {"", "false", "no", "off", "0", *_TRUE}  # core.fsmonitor=true: git's own daemon
_SECTION = re.compile(r'[ \t]*\[[ \t]*([A-Za-z0-9.-]+)(?:[ \t]+"((?:[^"\\\n]|\\.)*)")?[ \t]*\]')
_NAME = re.compile(r"[ \t]*([A-Za-z][A-Za-z0-9-]*)[ \t]*(=)?")


@dataclass(frozen=True, slots=True)
class Entry:
    key: str  # section[.subsection].name; section and name lower-case
    value: str | None  # None: the key stood alone (a boolean true)
    source: Path | None = None


def parse_config(text: str, source: Path | None = None) -> list[Entry]:
    """The entries of a git configuration file, in git's syntax. What git would reject
    ends the parse: git refuses to run with a broken configuration."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    entries: list[Entry] = []
    section, position = "", 0
    while position < len(text):
        header = _SECTION.match(text, position)
        if header:
            name, sub = header.group(1).lower(), header.group(2)
            if sub is not None:
                section = name + "." + re.sub(r"\\(.)", r"\1", sub)
            elif "." in name:  # the old [section.subsection] form
                head, _, tail = name.partition(".")
                section = f"{head}.{tail}"
            else:
                section = name
            position = header.end()
            continue
        line_end = text.find("\n", position)
        line_end = len(text) if line_end < 0 else line_end
        stripped = text[position:line_end].strip()
        if not stripped or stripped[0] in "#;":
            position = line_end + 1
            continue
        match = _NAME.match(text, position)
        if match is None or not section:
            break
        key = f"{section}.{match.group(1).lower()}"
        if match.group(2) is None:
            rest = text[match.end() : line_end].strip()
            if rest and rest[0] not in "#;":
                break
            entries.append(Entry(key, None, source))
            position = line_end + 1
            continue
        value, position = _value(text, match.end())
        entries.append(Entry(key, value, source))
    return entries


def _value(text: str, position: int) -> tuple[str, int]:
    """A value as git reads it: quotes joined, escapes decoded, comments dropped, a
    backslash-newline continuing it, blanks outside quotes trimmed at both ends."""
    out: list[str] = []
    pending_space = False
    quoted = False
    escapes = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}
    while position < len(text):
        char = text[position]
        position += 1
        if char == "\n" and not quoted:
            break
        if char == "\\" and position < len(text):
            nxt = text[position]
            position += 1
            if nxt == "\n":
                continue
            char = escapes.get(nxt, nxt)
        elif char == '"':
            quoted = not quoted
            continue
        elif not quoted and char in "#;":
            newline = text.find("\n", position)
            position = len(text) if newline < 0 else newline + 1
            break
        elif not quoted and char in " \t":
            pending_space = bool(out)
            continue
        if pending_space:
            out.append(" ")
            pending_space = False
        out.append(char)
    return "".join(out), position


def read_text(path: Path) -> str | None:
    """A regular file's text, or None: a FIFO or device planted in a workspace must not
    make the classifier wait (opened without blocking, checked after opening)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, _MAX_FILE).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def read_config(path: Path, depth: int = 0) -> list[Entry]:
    """A configuration file's entries with its includes in place (missing files, as git
    does, count as empty; include conditions are taken as met)."""
    text = read_text(path)
    if text is None:
        return []
    entries: list[Entry] = []
    for entry in parse_config(text, path):
        entries.append(entry)
        included = entry.key == "include.path" or (
            entry.key.startswith("includeif.") and entry.key.endswith(".path")
        )
        if included and entry.value and depth < _INCLUDE_DEPTH:
            target = Path(os.path.expanduser(entry.value))
            entries += read_config(path.parent / target, depth + 1)
    return entries


@dataclass(frozen=True, slots=True)
class Repository:
    git_dir: Path
    work_tree: Path | None  # None for a bare repository


def find_repository(cwd: Path) -> Repository | None:
    """The repository git would use in `cwd`: the nearest `.git` directory or `gitdir:`
    file above it, or `cwd` itself when it is a bare repository."""
    here = Path(os.path.abspath(cwd))
    for directory in (here, *here.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return Repository(dot_git, directory)
        if dot_git.is_file():
            pointed = _pointed_dir(dot_git)
            return Repository(pointed, directory) if pointed else None
        if (directory / "HEAD").is_file() and (directory / "objects").is_dir():
            return Repository(directory, None)  # a bare repository (or inside a git dir)
    return None


def find_git_dir(cwd: Path) -> Path | None:
    found = find_repository(cwd)
    return found.git_dir if found else None


def _pointed_dir(dot_git_file: Path) -> Path | None:
    text = read_text(dot_git_file)
    if text is None:
        return None
    match = re.match(r"gitdir:\s*(.+)", text.strip())
    if match is None:
        return None
    return (dot_git_file.parent / match.group(1).strip()).resolve()


def _common_dir(git_dir: Path) -> Path:
    common = (read_text(git_dir / "commondir") or "").strip()
    return (git_dir / common).resolve() if common else git_dir


def git_dirs(repository: Repository) -> Iterator[tuple[Path, Path | None]]:
    """Every git directory the command may read configuration from, with its work tree:
    the repository's and its submodules' (which `git status` and `git diff` look into,
    each with its own configuration and hooks)."""
    common = _common_dir(repository.git_dir)
    yield repository.git_dir, repository.work_tree
    modules = common / "modules"
    if modules.is_dir():
        for config in sorted(modules.glob("**/config"))[:200]:
            worktree = next(
                (e.value for e in read_config(config) if e.key == "core.worktree" and e.value),
                None,
            )  # an absorbed submodule names its work tree, relative to its git directory
            yield config.parent, (config.parent / worktree).resolve() if worktree else None
    if repository.work_tree is not None:
        gitmodules = read_config(repository.work_tree / ".gitmodules")
        for entry in gitmodules[:200]:
            if entry.key.startswith("submodule.") and entry.key.endswith(".path") and entry.value:
                found = find_repository(repository.work_tree / entry.value)
                if found and found.git_dir != repository.git_dir:
                    yield found.git_dir, found.work_tree


def config_files(git_dir: Path) -> list[Path]:
    """The configuration files git reads for a git directory: the common directory's (a
    linked worktree's is elsewhere), and the worktree's own `config.worktree`."""
    common = _common_dir(git_dir)
    files = [
        common / "config",
        common / "config.worktree",
        git_dir / "config",
        git_dir / "config.worktree",
    ]
    return [path for path in dict.fromkeys(files) if path.is_file()]


def shows_contents(subcommand: str | None, args: list[str] | None) -> bool:
    """Whether `git log` / `git show` with these arguments may compare file contents."""
    if subcommand not in ("log", "show", "shortlog", "stash") or args is None:
        return True
    if subcommand == "stash":
        return args[:1] != ["list"]
    if subcommand == "show":
        return not any(a in ("-s", "--no-patch") for a in args)
    for arg in args:
        if arg == "--":
            break
        option = arg.startswith("-") and not re.fullmatch(r"-\d+|-n\d+", arg)
        if option and arg.split("=", 1)[0] not in _LOG_WITHOUT_CONTENTS:
            return True
    return False


def program_key_in(text: str, subcommand: str | None = None) -> str | None:
    """The first key of a configuration text that makes `subcommand` (None: any) run a
    program, as `section.subsection.key`, or None."""
    found = _program_entry(parse_config(text), subcommand)
    return found.key if found else None


def _program_entry(
    entries: list[Entry], subcommand: str | None, contents: bool = True
) -> Entry | None:
    return next(program_entries(entries, subcommand, contents), None)


def program_entries(
    entries: list[Entry], subcommand: str | None, contents: bool = True
) -> Iterator[Entry]:
    """The entries that make `subcommand` (None: any) run a program."""
    for entry in entries:
        value = entry.value or ""  # exactly as git has it: "true " is a command, not a boolean
        if entry.key == "core.fsmonitor" and (entry.value is None or _boolean(value) is not None):
            continue
        if entry.value is not None and not value.strip():
            continue  # an empty command runs nothing
        for pattern, users in PROGRAM_KEYS:
            if users in (TEXTCONV, DIFFS) and not contents:
                continue
            if pattern.match(entry.key) and (
                subcommand is None or users is None or subcommand in users
            ):
                yield entry
                break
        else:
            shows = entry.key == "log.showsignature" and _true(entry)
            if shows and (subcommand is None or subcommand in SIGNATURES):
                yield entry


def _partial_clone(entries: list[Entry]) -> Entry | None:
    for entry in entries:
        if entry.key == "extensions.partialclone" and (entry.value or "").strip():
            return entry
        promisor = entry.key.startswith("remote.") and entry.key.endswith(".promisor")
        if promisor and _true(entry):
            return entry
    return None


def _boolean(value: str) -> bool | None:
    """git's boolean reading of a value: words, integers (nonzero is true), "" false."""
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _BOOLEAN:
        return False
    if re.fullmatch(r"[-+]?\d+[kmg]?", lowered):
        return int(re.sub(r"[kmg]$", "", lowered)) != 0
    return None


def _true(entry: Entry) -> bool:
    """A key alone is true; otherwise a value is true when git reads it as true (an
    unreadable one counts as true: git would stop, but nothing should slip through)."""
    return entry.value is None or _boolean(entry.value) is not False


def hooks_dir(git_dir: Path, work_tree: Path | None, entries: list[Entry]) -> Path:
    configured = next((e.value for e in reversed(entries) if e.key == "core.hookspath"), None)
    if configured:
        path = Path(os.path.expanduser(configured))
        return path if path.is_absolute() else (work_tree or git_dir) / path
    return _common_dir(git_dir) / "hooks"


def repository_problem(
    cwd: Path,
    subcommand: str | None = None,
    *,
    git_dir: Path | None = None,
    contains: Callable[[Path], bool] | None = None,
    args: list[str] | None = None,
) -> str | None:
    """Why `git SUBCOMMAND` run in `cwd` (with `--git-dir`, if given) may run a program the
    repository names, reach the network or read a file outside (`contains` tells what is
    inside); None also when `cwd` is in no repository. `subcommand` None: any; `args`, the
    subcommand's arguments, tell whether `git log` compares contents."""
    repository = Repository(git_dir, None) if git_dir else find_repository(cwd)
    if repository is None:
        return None
    for directory, work_tree in git_dirs(repository):
        entries = [e for config in config_files(directory) for e in read_config(config)]
        found = _program_entry(entries, subcommand, shows_contents(subcommand, args))
        if found is not None:
            where = _describe(found, repository.git_dir)
            return f"the repository's configuration ({where}) sets {found.key}: git would run it"
        found = _partial_clone(entries)
        if found is not None and subcommand not in NO_OBJECTS:
            where = _describe(found, repository.git_dir)
            return f"a partial clone ({where} sets {found.key}): git may fetch missing objects"
        problem = _outside_file(entries, subcommand, directory, work_tree, contains)
        if problem is not None:
            return problem
        if subcommand is None or subcommand in INDEX_WRITERS:
            hook = hooks_dir(directory, work_tree, entries) / "post-index-change"
            if hook.is_file() and os.access(hook, os.X_OK):
                return f"git {subcommand or ''} writes the index, which runs the hook {hook.name}"
    return None


def _outside_file(
    entries: list[Entry],
    subcommand: str | None,
    git_dir: Path,
    work_tree: Path | None,
    contains: Callable[[Path], bool] | None,
) -> str | None:
    for entry in entries:
        for key, users in FILE_KEYS:
            if entry.key != key or not entry.value or (subcommand and subcommand not in users):
                continue
            base = git_dir if key == "core.worktree" else (work_tree or git_dir)
            target = Path(os.path.realpath(base / os.path.expanduser(entry.value)))
            if contains is None or not contains(target):
                where = _describe(entry, git_dir)
                return f"the repository's configuration ({where}) sets {key} outside the workspace"
    return None


def _describe(entry: Entry, git_dir: Path) -> str:
    """Where an entry was set, relative to the git directory when it is inside it."""
    source = entry.source
    if source is None:
        return "config"
    for base in (git_dir, git_dir.parent):
        if source.is_relative_to(base):
            return str(source.relative_to(base))
    return str(source)
