"""Which paths of a workspace are protected: what git executes or reads configuration from —
hooks, `config`, `config.worktree`, `commondir`, `gitdir`, `info/`, alternates, the git
directories of worktrees and submodules, and the hooks folder and included files that the
repository's own configuration names inside the workspace (`core.hooksPath = .husky`) —
for the workspace's own repository and for every repository below it, the `.git` entries
themselves (a directory, or a file or link naming one elsewhere), and `.agentcli/`.

Everything is reached through descriptors without following a link. Repositories below the
workspace are found by a breadth-first search over directories (names only, no file is
read), bounded so that a large tree costs a bounded time; where a bound stops it short, the
survey says so in `gaps`, and agentcli.sandbox.guard fails closed on that."""

from __future__ import annotations

import os
import stat
import time
from collections import deque

from agentcli.records import dataclass, field

MAX_DIRS = 50_000  # directories searched for repositories below the workspace
MAX_REPOS = 200  # git directories protected (the workspace's, nested, worktrees', submodules')
MAX_LINKED = 200  # worktrees or submodules of one git directory

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

# Below a git directory, what git reads code, configuration or another directory's location
# from. Trees are kept whole; pins are directories kept by identity (git writes inside
# them, a command may not swap them).
GIT_TREES = ("hooks", "info")
GIT_FILES = (
    "config",
    "config.worktree",
    "commondir",
    "gitdir",
    "objects/info/alternates",
    "objects/info/http-alternates",
)
GIT_PINS = ("objects", "objects/info", "worktrees", "modules")
OWN = ".agentcli"


@dataclass(frozen=True, slots=True)
class Gap:
    """Why a protected path may not be kept as it was, and what a person can do about it."""

    what: str
    remedy: str


@dataclass(slots=True)
class Survey:
    """Paths relative to the workspace, existing or not, most important first."""

    git: list[str] = field(default_factory=list)  # trees and files of what git follows
    pins: list[str] = field(default_factory=list)  # directories kept by identity
    repos: list[str] = field(default_factory=list)  # the git directories found
    own: list[str] = field(default_factory=lambda: [OWN])  # agentcli's: kept whole
    gaps: list[Gap] = field(default_factory=list)  # where a bound stopped the search
    searched: int = 0  # directories searched for repositories


def open_dir(ws_fd: int, rel: str) -> int | None:
    """A descriptor of directory `rel`, reached from the workspace one component at a time
    without following a link; None when a component is missing, not a directory, or a link."""
    fd = os.dup(ws_fd)
    try:
        for name in rel.split("/") if rel else ():
            next_fd = os.open(name, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = next_fd
    except OSError:
        os.close(fd)
        return None
    return fd


def is_dir(ws_fd: int, rel: str) -> bool:
    fd = open_dir(ws_fd, rel)
    if fd is None:
        return False
    os.close(fd)
    return True


def names(ws_fd: int, rel: str) -> list[str]:
    fd = open_dir(ws_fd, rel)
    if fd is None:
        return []
    try:
        return sorted(os.listdir(fd))
    except OSError:
        return []
    finally:
        os.close(fd)


def split(rel: str) -> tuple[str, str]:
    parent, _, name = rel.rpartition("/")
    return parent, name


@dataclass(slots=True)
class Listing:
    """What the search saw in one directory: its subdirectories, and whether it holds a
    `.git`; valid while the directory's stamp (inode, mtime, ctime) stays the same."""

    stamp: tuple[int, int, int]
    subdirs: list[str]
    has_git: bool


# A directory changed this recently may change again within the same tick of the file
# system's clock, unseen by its mtime: its listing is not kept for the next search.
SETTLED_NS = 1_000_000_000


def survey(ws_fd: int, workspace: str, seen: dict[str, Listing] | None = None) -> Survey:
    """The workspace's protected paths: its own repository first, then the repositories
    the bounded search finds below it, then `.agentcli/`. `seen`: the last search's
    listings, updated in place; a directory unchanged since is not listed again."""
    found = Survey()
    _add_repository(ws_fd, workspace, "", found)
    _search(ws_fd, workspace, found, {} if seen is None else seen)
    found.git = list(dict.fromkeys(found.git))
    found.pins = list(dict.fromkeys(found.pins))
    return found


def _search(ws_fd: int, workspace: str, found: Survey, seen: dict[str, Listing]) -> None:
    """Breadth first, so that the repositories nearest the top are found before a bound is
    reached. Only names are listed (one stat per directory, and one open and one getdents
    for a directory that changed since the last search); a directory is reached by its
    path from the workspace, which is safe here because nothing is read or written through
    it: what it finds is kept through `open_dir`'s strict walk."""
    now = time.time_ns()
    kept: dict[str, Listing] = {}
    frontier: deque[str] = deque([""])
    while frontier:
        if found.searched >= MAX_DIRS:
            found.gaps.append(
                Gap(
                    f"the workspace holds more than {MAX_DIRS:,} directories, so agentcli "
                    "could not look for git repositories in all of them",
                    "start agentcli in a smaller directory",
                )
            )
            break
        rel = frontier.popleft()
        found.searched += 1
        listing = _listing(ws_fd, rel, seen.get(rel), now)
        if listing is None:
            continue
        if listing.stamp[1] < now - SETTLED_NS and listing.stamp[2] < now - SETTLED_NS:
            kept[rel] = listing
        if listing.has_git and rel:
            _add_repository(ws_fd, workspace, rel, found)
        frontier.extend(f"{rel}/{name}" if rel else name for name in listing.subdirs)
    seen.clear()
    seen.update(kept)


def _listing(ws_fd: int, rel: str, before: Listing | None, now: int) -> Listing | None:
    """Directory `rel`'s subdirectories (sorted; `.git` and the workspace's `.agentcli/`
    left out) and whether it holds a `.git`; `before` where it has not changed since."""
    try:
        info = os.stat(rel or ".", dir_fd=ws_fd, follow_symlinks=False)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    stamp = (info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
    if before is not None and before.stamp == stamp:
        return before
    subdirs: list[str] = []
    has_git = False
    try:
        fd = os.open(rel or ".", DIR_FLAGS, dir_fd=ws_fd)
    except OSError:
        return None
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if entry.name == ".git":
                    has_git = True
                elif entry.is_dir(follow_symlinks=False):
                    subdirs.append(entry.name)
    except OSError:
        pass
    finally:
        os.close(fd)
    if not rel and OWN in subdirs:
        subdirs.remove(OWN)
    return Listing(stamp, sorted(subdirs), has_git)


def _add_repository(ws_fd: int, workspace: str, top: str, found: Survey) -> None:
    """The `.git` entry of the working tree at `top`: kept as it is (a directory, or a file
    or link naming a git directory), and the git directory it is or names, where that lies
    inside the workspace (elsewhere no command can write it)."""
    rel = f"{top}/.git" if top else ".git"
    found.git.append(rel)
    parent, name = split(rel)
    fd = open_dir(ws_fd, parent)
    if fd is None:
        return
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            target: str | None = rel
        elif stat.S_ISLNK(info.st_mode):
            target = _inside(workspace, top, os.readlink(name, dir_fd=fd))
        elif stat.S_ISREG(info.st_mode):
            target = _inside(workspace, top, _gitdir_of(fd, name))
        else:
            target = None
    except OSError:
        return
    finally:
        os.close(fd)
    if target is not None:
        _add_git_dir(ws_fd, target, found)
        _add_configured(ws_fd, workspace, top, target, found)


CONFIG_BYTES = 1 << 20  # a git configuration larger than this is not read for paths
INCLUDE_DEPTH = 3  # included files followed this deep (git itself stops at 10)


def _add_configured(ws_fd: int, workspace: str, top: str, git_dir: str, found: Survey) -> None:
    """What the repository's own configuration points git at inside the workspace: the
    hooks folder `core.hooksPath` names (`.husky`, `.githooks`), and the files
    `include.path` / `includeIf.*.path` pull in. A command could write there and git
    would run or read it next, outside any sandbox, so they are protected as `hooks/`
    and `config` are."""
    from agentcli.policy.git_config import parse_config

    pending = [(f"{git_dir}/config", 0), (f"{git_dir}/config.worktree", 0)]
    while pending:
        rel, depth = pending.pop(0)
        text = read_small(ws_fd, rel)
        if text is None:
            continue
        for entry in parse_config(text):
            value = entry.value
            if not value:
                continue
            if entry.key == "core.hookspath":
                place = _inside(workspace, top, os.path.expanduser(value))
            elif entry.key == "include.path" or (
                entry.key.startswith("includeif.") and entry.key.endswith(".path")
            ):
                place = _inside(workspace, split(rel)[0], os.path.expanduser(value))
                if place is not None and depth + 1 < INCLUDE_DEPTH:
                    pending.append((place, depth + 1))
            else:
                continue
            if place is not None and place not in found.git:
                found.git.append(place)


def read_small(ws_fd: int, rel: str) -> str | None:
    """A regular file's text, reached without following a link; None when it is missing,
    not a regular file, or larger than CONFIG_BYTES."""
    parent, name = split(rel)
    fd = open_dir(ws_fd, parent)
    if fd is None:
        return None
    try:
        file_fd = os.open(name, FILE_FLAGS, dir_fd=fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    with os.fdopen(file_fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(file_fd).st_mode):
            return None
        data = handle.read(CONFIG_BYTES + 1)
    return None if len(data) > CONFIG_BYTES else data.decode("utf-8", "replace")


def _gitdir_of(dir_fd: int, name: str) -> str:
    """The directory a `.git` file names (`gitdir: PATH`), or "" when it names none."""
    try:
        with os.fdopen(os.open(name, FILE_FLAGS, dir_fd=dir_fd), "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return ""
    first = head.split(b"\n", 1)[0].strip()
    if not first.startswith(b"gitdir:"):
        return ""
    return os.fsdecode(first[len(b"gitdir:") :].strip())


def _inside(workspace: str, top: str, path: str) -> str | None:
    """`path` (relative to `top`, or absolute) as a path relative to the workspace; None
    when it names nothing, or a place outside it."""
    if not path:
        return None
    full = os.path.normpath(os.path.join(workspace, top, path))
    root = os.path.normpath(workspace)
    if full == root or not full.startswith(root.rstrip("/") + "/"):
        return None
    return os.path.relpath(full, root)


def _add_git_dir(ws_fd: int, git_dir: str, found: Survey) -> None:
    """A git directory's files and trees, and those of its worktrees and submodules."""
    if git_dir in found.repos:
        return
    if len(found.repos) >= MAX_REPOS:
        too_many = Gap(
            f"the workspace holds more than {MAX_REPOS} git repositories (worktrees and "
            "submodules count), more than agentcli keeps",
            "start agentcli in a directory with fewer",
        )
        if too_many not in found.gaps:
            found.gaps.append(too_many)
        return
    found.repos.append(git_dir)
    found.pins.append(git_dir)
    found.pins += [f"{git_dir}/{name}" for name in GIT_PINS]
    found.git += [f"{git_dir}/{name}" for name in (*GIT_TREES, *GIT_FILES)]
    for group in ("worktrees", "modules"):
        linked = names(ws_fd, f"{git_dir}/{group}")
        if len(linked) > MAX_LINKED:
            found.gaps.append(
                Gap(
                    f"{git_dir}/{group} holds more than {MAX_LINKED} entries, more than "
                    "agentcli keeps",
                    f"remove the {group} you no longer use",
                )
            )
        for name in linked[:MAX_LINKED]:
            sub = f"{git_dir}/{group}/{name}"
            if is_dir(ws_fd, sub):
                _add_git_dir(ws_fd, sub, found)
