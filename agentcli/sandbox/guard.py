"""The protected paths of a workspace (agentcli.sandbox.protected: what git follows, for
the workspace's repository and every one below it, and `.agentcli/`) as they were while no
command ran, put back when a command that could write the workspace ends.

Bubblewrap binds the ones that exist read-only and pins each `.git` directory (a mount
point cannot be renamed or removed), so there this check only undoes what a command created
where nothing was, and keeps no copy of contents (`mounts`). Landlock cannot make a hole
read-only inside a writable tree, so on a Landlock-only host this check is what holds, and
it is built not to race what it checks:

- the baseline is the state when no command was running (taken when the first of
  overlapping commands starts), so a command running beside another cannot poison it;
- what git follows is recorded first, with whole contents, in a budget of its own, and
  `.agentcli/` after it in another: a large `.agentcli/` cannot crowd out `.git/config`;
- where a bound is reached (a budget, the search for repositories) the baseline says so
  (`gaps`), and agentcli.policy.engine then runs no command that may write the workspace
  without a person's approval; a file too large to keep that changes anyway is removed,
  never left as the command wrote it;
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
from agentcli.sandbox.protected import (
    DIR_FLAGS,
    FILE_FLAGS,
    Gap,
    Listing,
    Survey,
    is_dir,
    names,
    open_dir,
    read_small,
    split,
    survey,
)

MIB = 1024 * 1024
GIT_ENTRIES, GIT_BYTES = 20_000, 64 * MIB  # what git follows, in every repository found
OWN_ENTRIES, OWN_BYTES = 10_000, 8 * MIB  # .agentcli/


@dataclass(slots=True)
class Budget:
    entries: int
    size: int


@dataclass(slots=True)
class Entry:
    mode: int
    content: bytes | None = None  # a regular file's bytes (None: not kept)
    target: str | None = None  # a symlink's target
    inode: tuple[int, int] | None = None  # a directory's (st_dev, st_ino)
    stamp: tuple[int, int, int, int] | None = None  # inode, size, mtime, ctime
    whole: bool = False  # a directory kept as a tree, not a pin
    cut: bool = False  # a tree not every entry of which is kept: nothing in it is "new"


@dataclass(slots=True)
class Baseline:
    entries: dict[str, Entry | None] = field(default_factory=dict)  # None: absent
    survey: Survey = field(default_factory=Survey)
    gaps: list[Gap] = field(default_factory=list)  # where it is not complete

    @property
    def complete(self) -> bool:
        return not self.gaps


def _state(ws_fd: int, rel: str, limit: int) -> Entry | None:
    """What is at `rel` now (reached without following links), None when nothing is. A
    regular file's contents are read when it holds at most `limit` bytes (-1: never)."""
    parent, name = split(rel)
    fd = open_dir(ws_fd, parent)
    if fd is None:
        return None
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        entry = Entry(info.st_mode)
        entry.stamp = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        if stat.S_ISDIR(info.st_mode):
            entry.inode = (info.st_dev, info.st_ino)
        elif stat.S_ISLNK(info.st_mode):
            entry.target = os.readlink(name, dir_fd=fd)
        if stat.S_ISREG(info.st_mode) and info.st_size <= limit:
            with os.fdopen(os.open(name, FILE_FLAGS, dir_fd=fd), "rb") as handle:
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
    if before.content is not None:
        return before.content == now.content
    return before.stamp == now.stamp  # not kept: any write changes its ctime


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
    """One workspace's protected paths, for one session (agentcli.sandbox.confine).
    `mounts`: the sandbox makes the ones that exist read-only (bubblewrap, Seatbelt), so
    only what exists is kept, not contents."""

    def __init__(self, workspace: str, *, mounts: bool = False) -> None:
        self.workspace = workspace
        self.mounts = mounts
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._running = 0
        self._baseline: Baseline | None = None
        self._checked: Baseline | None = None  # taken by `gap` while no command ran
        self._seen: dict[str, Listing] = {}  # the last search's listings of directories

    def begin(self) -> None:
        """A command that may write the workspace starts: when none is running, what is
        there now is the baseline (the user may have changed it since the last one). The
        one `gap` has just taken serves, unless anything in it has changed since (a
        search of the tree is the costly part: it is not made twice for one command)."""
        with self._lock:
            if self._running == 0:
                checked, self._checked = self._checked, None
                if checked is None or not self._unchanged(checked):
                    checked = self._take()
                self._baseline = checked
            self._running += 1

    def end(self) -> list[str]:
        """A command ended, every process of it with it: what it changed of the protected
        paths is put back; returns those paths (relative to the workspace)."""
        with self._lock:
            self._running = max(self._running - 1, 0)
            self._checked = None
            if self._baseline is None:
                return []
            changed = self._restore(self._baseline)
            return changed + self._disarm_new_repositories(self._baseline)

    def gap(self) -> Gap | None:
        """Why the baseline a command starting now would get is not complete (None: it
        is): the one held while commands run, else the state now."""
        with self._lock:
            if self._running and self._baseline is not None:
                baseline = self._baseline
            else:
                baseline = self._checked = self._take()
        return baseline.gaps[0] if baseline.gaps else None

    def protected(self) -> tuple[list[str], list[str]]:
        """For the sandbox's mounts, from the baseline in force (after `begin`): the
        protected paths that exist and are not links (absolute), and the `.git`
        directories to pin."""
        baseline = self._baseline
        if baseline is None:
            return [], []
        found = baseline.survey
        ws_fd = self._workspace_fd()
        pinned = [r for r in found.repos if split(r)[1] == ".git" and is_dir(ws_fd, r)]
        kept = [r for r in (*found.git, *found.own) if r not in pinned]
        paths = [os.path.join(self.workspace, r) for r in kept]
        paths = [p for p in paths if os.path.lexists(p) and not os.path.islink(p)]
        return paths, [os.path.join(self.workspace, r) for r in pinned]

    def accept(self, path: str) -> None:
        """agentcli itself wrote `path` (a person approved that one call): its new state
        is the baseline's, so that a check does not undo it."""
        with self._lock:
            self._checked = None
            baseline = self._baseline
            if baseline is None:
                return
            rel = os.path.relpath(path, self.workspace)
            for key in sorted(baseline.entries, key=len, reverse=True):  # the deepest
                if key == rel or rel.startswith(key + "/"):
                    budget = Budget(GIT_ENTRIES, GIT_BYTES)
                    self._record(key, baseline, budget, whole=_is_whole(baseline, key))
                    break

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # --- the baseline

    def _workspace_fd(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.workspace, DIR_FLAGS)
        return self._fd

    def _take(self) -> Baseline:
        found = survey(self._workspace_fd(), self.workspace, self._seen)
        baseline = Baseline(survey=found, gaps=list(found.gaps))
        git = Budget(GIT_ENTRIES, GIT_BYTES)  # what git follows first, in a budget of its own
        for rel in found.pins:
            self._keep(rel, baseline, git, whole=False)
        for rel in found.git:
            if rel not in baseline.entries:
                self._keep(rel, baseline, git, whole=True)
        own = Budget(OWN_ENTRIES, OWN_BYTES)
        for rel in found.own:
            self._keep(rel, baseline, own, whole=True)
        return baseline

    def _unchanged(self, baseline: Baseline) -> bool:
        """Whether every entry is as it was when `baseline` was taken (a directory's
        stamp changes when an entry is added to it or removed)."""
        ws_fd = self._workspace_fd()
        for rel, before in baseline.entries.items():
            now = _state(ws_fd, rel, -1)
            if (before is None) != (now is None):
                return False
            if before is not None and now is not None and before.stamp != now.stamp:
                return False
        return True

    def _keep(self, rel: str, baseline: Baseline, budget: Budget, *, whole: bool) -> None:
        if self._record(rel, baseline, budget, whole=whole) or self.mounts:
            return
        own = rel in baseline.survey.own
        entries, size = (OWN_ENTRIES, OWN_BYTES) if own else (GIT_ENTRIES, GIT_BYTES)
        where = f"{rel}/" if own else "what git follows"
        baseline.gaps.append(
            Gap(
                f"{rel} holds more than agentcli keeps a copy of ({entries:,} entries or "
                f"{size // MIB} MiB for {where})",
                f"make {rel} smaller",
            )
        )

    def _record(self, rel: str, baseline: Baseline, budget: Budget, *, whole: bool) -> bool:
        """Keeps `rel` (a tree: with everything in it) in the baseline; False when the
        budget ran out before all of it was kept."""
        if whole:
            for key in [k for k in baseline.entries if k.startswith(rel + "/")]:
                del baseline.entries[key]
        if budget.entries <= 0:
            return False
        budget.entries -= 1
        entry = _state(self._workspace_fd(), rel, -1 if self.mounts else budget.size)
        baseline.entries[rel] = entry
        if entry is None:
            return True
        if stat.S_ISREG(entry.mode) and not self.mounts:
            if entry.content is None:
                return False
            budget.size -= len(entry.content)
        if not (stat.S_ISDIR(entry.mode) and whole):
            return True
        entry.whole = True
        if self.mounts:
            entry.cut = True  # a read-only mount while a command runs: nothing to list
            return True
        complete = True
        for name in names(self._workspace_fd(), rel):
            complete = self._record(f"{rel}/{name}", baseline, budget, whole=True) and complete
        entry.cut = not complete
        return complete

    # --- putting back

    def _restore(self, baseline: Baseline) -> list[str]:
        ws_fd = self._workspace_fd()
        changed: list[str] = []
        for rel in sorted(baseline.entries):  # a parent before what is in it
            before = baseline.entries[rel]
            kept = before.content if before is not None else None
            now = _state(ws_fd, rel, -1 if kept is None else len(kept))
            if not _same(before, now):
                changed.append(rel)
                self._put_back(ws_fd, rel, before, now)
            if before is not None and before.whole and not before.cut:
                changed += self._remove_extras(ws_fd, rel, baseline)
        return sorted(set(changed))

    def _disarm_new_repositories(self, baseline: Baseline) -> list[str]:
        """A repository the command created (`git init sub`) had no baseline to be put back
        to, yet what it plants there runs at the user's next `git` in it: its hooks other
        than git's own samples are removed, and a configuration that makes git run a
        program is set aside as `config.refused` (git works without it)."""
        ws_fd = self._workspace_fd()
        now = survey(ws_fd, self.workspace, self._seen)
        changed: list[str] = []
        for repo in now.repos:
            if repo in baseline.survey.repos:
                continue
            hooks = open_dir(ws_fd, f"{repo}/hooks")
            if hooks is not None:
                try:
                    for name in os.listdir(hooks):
                        if not name.endswith(".sample"):
                            _remove(hooks, name)
                            changed.append(f"{repo}/hooks/{name}")
                except OSError:
                    pass
                finally:
                    os.close(hooks)
            for name in ("config", "config.worktree"):
                if _runs_programs(ws_fd, f"{repo}/{name}"):
                    changed.append(f"{repo}/{name}")
                    _set_aside(ws_fd, f"{repo}/{name}")
        return changed

    def _remove_extras(self, ws_fd: int, rel: str, baseline: Baseline) -> list[str]:
        """Entries of a kept tree that the baseline does not have (a new hook)."""
        fd = open_dir(ws_fd, rel)
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
        """`rel` as the baseline has it. What cannot be put back (a file too large to
        keep a copy of) is removed: never left as the command wrote it."""
        parent, name = split(rel)
        fd = open_dir(ws_fd, parent)
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


# What in a repository's configuration makes an ordinary `git` (status, commit, checkout,
# fetch, diff) run a program or read one more file: a new repository may not carry it.
_RUNS = (
    "core.fsmonitor",
    "core.hookspath",
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.gitproxy",
    "diff.external",
    "gpg.program",
    "sequence.editor",
    "credential.helper",
    "include.path",
)
_RUNS_IN = ("filter.", "diff.", "merge.", "pager.", "includeif.", "gpg.", "credential.")
_RUN_SUFFIXES = (".clean", ".smudge", ".process", ".command", ".textconv", ".driver", ".path")


def _runs_programs(ws_fd: int, rel: str) -> bool:
    from agentcli.policy.git_config import parse_config

    text = read_small(ws_fd, rel)
    if text is None:
        return False
    for entry in parse_config(text):
        key = entry.key
        if key in _RUNS or key.startswith("pager.") or key.startswith("gpg."):
            return True
        if key.startswith(_RUNS_IN) and key.endswith(_RUN_SUFFIXES):
            return True
        if key.startswith("remote.") and key.endswith((".uploadpack", ".receivepack")):
            return True
    return False


def _set_aside(ws_fd: int, rel: str) -> None:
    parent, name = split(rel)
    fd = open_dir(ws_fd, parent)
    if fd is None:
        return
    try:
        os.rename(name, f"{name}.refused", src_dir_fd=fd, dst_dir_fd=fd)
    except OSError:
        _remove(fd, name)  # never left as the command wrote it
    finally:
        os.close(fd)
