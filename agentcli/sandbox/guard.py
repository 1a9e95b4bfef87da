"""The protected paths of a workspace — the `.git` entry and what git follows from it
(hooks, configuration, `commondir`, `gitdir`, alternates, `info/`, the git directories of
worktrees and submodules) and `.agentcli/` — as they were while no command ran, put back
when a command that could write the workspace ends.

Bubblewrap binds the ones that exist read-only and pins `.git` itself (a mount point
cannot be renamed or removed), so there this check only undoes what a command created
where nothing was. Landlock cannot make a hole read-only inside a writable tree, so on a
Landlock-only host this check is what holds, and it is built not to race what it checks:

- the baseline is the state when no command was running (taken when the first of
  overlapping commands starts), so a command running beside another cannot poison it;
- it acts only through a descriptor of the workspace opened before the first command ran,
  walking every path one component at a time with O_NOFOLLOW: a `.git` swapped for a
  symlink, or a symlink planted in `.git/hooks`, is removed, never followed;
- checks are serialised, and a command's keeper has killed every process of it before
  its check runs (agentcli.sandbox.launcher), so nothing of it writes after the check."""

from __future__ import annotations

import contextlib
import os
import stat
import threading

from agentcli.records import dataclass, field

MAX_FILES = 2000
MAX_BYTES = 8 * 1024 * 1024
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

# Below a git directory (the workspace's, a worktree's, a submodule's), what git reads code,
# configuration or another directory's location from. Trees are kept whole; pins are
# directories kept by identity (git writes inside them, a command may not swap them).
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


@dataclass(slots=True)
class Entry:
    mode: int
    content: bytes | None = None  # a regular file's bytes (None: too large to keep)
    target: str | None = None  # a symlink's target
    inode: tuple[int, int] | None = None  # a directory's (st_dev, st_ino)
    whole: bool = False  # a directory whose every entry is kept (a tree, not a pin)


@dataclass(slots=True)
class Baseline:
    entries: dict[str, Entry | None] = field(default_factory=dict)  # None: absent
    complete: bool = True


def protected_paths(ws_fd: int) -> tuple[list[str], list[str]]:
    """(trees and files, pins) to keep, relative to the workspace, existing or not."""
    kept, pins = [".agentcli", ".git"], [".git"]
    if _open_dir(ws_fd, ".git", close=True) is None:
        return kept, pins  # absent, or a `gitdir:` file: kept as a file
    for git_dir in [".git", *_git_dirs(ws_fd)]:
        kept += [f"{git_dir}/{name}" for name in (*GIT_TREES, *GIT_FILES)]
        pins += [git_dir, *(f"{git_dir}/{name}" for name in GIT_PINS)]
    return kept, pins


def _git_dirs(ws_fd: int) -> list[str]:
    """The git directories below `.git`: `worktrees/NAME`, `modules/NAME` (nested too)."""
    found: list[str] = []
    frontier = [".git"]
    while frontier and len(found) < 200:
        git_dir = frontier.pop()
        for group in ("worktrees", "modules"):
            for name in _names(ws_fd, f"{git_dir}/{group}")[:200]:
                sub = f"{git_dir}/{group}/{name}"
                if _open_dir(ws_fd, sub, close=True) is not None:
                    found.append(sub)
                    if group == "modules":
                        frontier.append(sub)
    return found


def _open_dir(ws_fd: int, rel: str, *, close: bool = False) -> int | None:
    """A descriptor of directory `rel`, reached from the workspace without following a
    link; None when a component is missing, not a directory, or a link. With `close`,
    only whether it is one (the descriptor is closed; any int means yes)."""
    fd = os.dup(ws_fd)
    try:
        for name in rel.split("/") if rel else ():
            next_fd = os.open(name, _DIR, dir_fd=fd)
            os.close(fd)
            fd = next_fd
    except OSError:
        os.close(fd)
        return None
    if close:
        os.close(fd)
        return 0
    return fd


def _names(ws_fd: int, rel: str) -> list[str]:
    fd = _open_dir(ws_fd, rel)
    if fd is None:
        return []
    try:
        return sorted(os.listdir(fd))
    except OSError:
        return []
    finally:
        os.close(fd)


def _split(rel: str) -> tuple[str, str]:
    parent, _, name = rel.rpartition("/")
    return parent, name


def _state(ws_fd: int, rel: str, limit: int) -> Entry | None:
    """What is at `rel` now (reached without following links), None when nothing is."""
    parent, name = _split(rel)
    fd = _open_dir(ws_fd, parent)
    if fd is None:
        return None
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        entry = Entry(info.st_mode)
        if stat.S_ISDIR(info.st_mode):
            entry.inode = (info.st_dev, info.st_ino)
        elif stat.S_ISLNK(info.st_mode):
            entry.target = os.readlink(name, dir_fd=fd)
        elif stat.S_ISREG(info.st_mode) and info.st_size <= limit:
            with os.fdopen(os.open(name, _FILE, dir_fd=fd), "rb") as handle:
                data = handle.read(limit + 1)
            entry.content = data if len(data) <= limit else None
        return entry
    except OSError:
        return None
    finally:
        os.close(fd)


def _same(before: Entry | None, now: Entry | None) -> bool:
    if before is None or now is None:
        return before is None and now is None
    if before.mode != now.mode:
        return False
    if stat.S_ISDIR(before.mode):
        return before.inode == now.inode
    if stat.S_ISLNK(before.mode):
        return before.target == now.target
    return before.content is None or before.content == now.content


def _remove(dir_fd: int, name: str) -> None:
    """Removes `name` in `dir_fd`, a whole tree without following any link in it."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(info.st_mode):
            import shutil  # here: `policy explain` imports this module and removes nothing

            shutil.rmtree(name, dir_fd=dir_fd)
        else:
            os.unlink(name, dir_fd=dir_fd)


class Guard:
    """One workspace's protected paths, for one session (agentcli.sandbox.confine)."""

    def __init__(self, workspace: str) -> None:
        self.workspace = workspace
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._running = 0
        self._baseline: Baseline | None = None

    def begin(self) -> None:
        """A command that may write the workspace starts: when none is running, what is
        there now is the baseline (the user may have changed it since the last one)."""
        with self._lock:
            if self._running == 0:
                self._baseline = self._take()
            self._running += 1

    def end(self) -> list[str]:
        """A command ended, every process of it with it: what it changed of the protected
        paths is put back; returns those paths (relative to the workspace)."""
        with self._lock:
            self._running = max(self._running - 1, 0)
            if self._baseline is None:
                return []
            return self._restore(self._baseline)

    def accept(self, path: str) -> None:
        """agentcli itself wrote `path` (a person approved that one call): its new state
        is the baseline's, so that a check does not undo it."""
        with self._lock:
            baseline = self._baseline
            if baseline is None:
                return
            rel = os.path.relpath(path, self.workspace)
            for key in sorted(baseline.entries, key=len, reverse=True):  # the deepest
                if key == rel or rel.startswith(key + "/"):
                    self._record(key, baseline, [MAX_BYTES], whole=_is_whole(baseline, key))
                    break

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # --- the baseline

    def _workspace_fd(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.workspace, _DIR)
        return self._fd

    def _take(self) -> Baseline:
        kept, pins = protected_paths(self._workspace_fd())
        baseline = Baseline()
        budget = [MAX_BYTES]
        for rel in pins:
            self._record(rel, baseline, budget, whole=False)
        for rel in kept:
            if rel not in baseline.entries:
                self._record(rel, baseline, budget, whole=True)
        return baseline

    def _record(self, rel: str, baseline: Baseline, budget: list[int], *, whole: bool) -> None:
        for key in [k for k in baseline.entries if k.startswith(rel + "/")]:
            if whole:
                del baseline.entries[key]
        if len(baseline.entries) >= MAX_FILES:
            baseline.complete = False
            return
        entry = _state(self._workspace_fd(), rel, budget[0])
        baseline.entries[rel] = entry
        if entry is None:
            return
        if stat.S_ISREG(entry.mode):
            if entry.content is None:
                baseline.complete = False
            else:
                budget[0] -= len(entry.content)
        if stat.S_ISDIR(entry.mode) and whole:
            entry.whole = True
            for name in _names(self._workspace_fd(), rel):
                self._record(f"{rel}/{name}", baseline, budget, whole=True)

    # --- putting back

    def _restore(self, baseline: Baseline) -> list[str]:
        ws_fd = self._workspace_fd()
        changed: list[str] = []
        for rel in sorted(baseline.entries):  # a parent before what is in it
            before = baseline.entries[rel]
            now = _state(ws_fd, rel, MAX_BYTES)
            if not _same(before, now):
                changed.append(rel)
                self._put_back(ws_fd, rel, before, now)
            if before is not None and before.whole:
                changed += self._remove_extras(ws_fd, rel, baseline)
        return sorted(set(changed))

    def _remove_extras(self, ws_fd: int, rel: str, baseline: Baseline) -> list[str]:
        """Entries of a kept tree that the baseline does not have (a new hook)."""
        fd = _open_dir(ws_fd, rel)
        if fd is None:
            return []
        try:
            extra = [n for n in os.listdir(fd) if f"{rel}/{n}" not in baseline.entries]
            for name in extra:
                _remove(fd, name)
        except OSError:
            extra = []
        finally:
            os.close(fd)
        return [f"{rel}/{name}" for name in extra]

    def _put_back(self, ws_fd: int, rel: str, before: Entry | None, now: Entry | None) -> None:
        parent, name = _split(rel)
        fd = _open_dir(ws_fd, parent)
        if fd is None:
            return  # its parent is not the directory it was: the parent's entry says so
        try:
            if now is not None:
                _remove(fd, name)
            if before is None:
                return
            if stat.S_ISDIR(before.mode) and not before.whole:
                self._rename_back(fd, name, before)  # git's own: no new one would do
            elif stat.S_ISDIR(before.mode):
                os.mkdir(name, stat.S_IMODE(before.mode), dir_fd=fd)
            elif stat.S_ISLNK(before.mode) and before.target is not None:
                os.symlink(before.target, name, dir_fd=fd)
            elif stat.S_ISREG(before.mode) and before.content is not None:
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
                with os.fdopen(
                    os.open(name, flags, stat.S_IMODE(before.mode), dir_fd=fd), "wb"
                ) as handle:
                    handle.write(before.content)
        except OSError:
            pass  # reported as changed; the next check tries again
        finally:
            os.close(fd)

    @staticmethod
    def _rename_back(dir_fd: int, name: str, before: Entry) -> None:
        """A pinned directory (`.git`, its objects) moved aside within its parent: moved
        back. Its contents are git's, so a new empty one would be no repair."""
        for other in os.listdir(dir_fd):
            with contextlib.suppress(OSError):
                info = os.stat(other, dir_fd=dir_fd, follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode) and (info.st_dev, info.st_ino) == before.inode:
                    os.rename(other, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                    return


def _is_whole(baseline: Baseline, key: str) -> bool:
    entry = baseline.entries.get(key)
    return entry is None or entry.whole or not stat.S_ISDIR(entry.mode)
