"""A second line for protected paths inside a writable workspace (.git/hooks, .git/config,
.agentcli/): their state before a command, compared after it, and put back if the command
changed them. Bubblewrap and Seatbelt already keep them read-only; Landlock cannot carve a
read-only hole in a writable tree, so on a Landlock-only host this check is what holds."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from agentcli.records import dataclass, field

MAX_FILES = 2000
MAX_BYTES = 8 * 1024 * 1024


@dataclass(slots=True)
class Entry:
    mode: int
    content: bytes | None = None  # a regular file's bytes
    target: str | None = None  # a symlink's target


@dataclass(slots=True)
class Snapshot:
    roots: list[str]
    entries: dict[str, Entry] = field(default_factory=dict)
    complete: bool = True  # False when too large to keep every byte


def _record(path: str, snapshot: Snapshot, budget: list[int]) -> None:
    try:
        info = os.lstat(path)
    except OSError:
        return
    if len(snapshot.entries) >= MAX_FILES:
        snapshot.complete = False
        return
    if stat.S_ISLNK(info.st_mode):
        snapshot.entries[path] = Entry(info.st_mode, target=os.readlink(path))
    elif stat.S_ISDIR(info.st_mode):
        snapshot.entries[path] = Entry(info.st_mode)
        with contextlib.suppress(OSError):
            for name in sorted(os.listdir(path)):
                _record(os.path.join(path, name), snapshot, budget)
    elif stat.S_ISREG(info.st_mode):
        content = None
        if info.st_size <= budget[0]:
            with contextlib.suppress(OSError), open(path, "rb") as handle:
                content = handle.read()
                budget[0] -= len(content)
        if content is None:
            snapshot.complete = False
        snapshot.entries[path] = Entry(info.st_mode, content=content)
    else:
        snapshot.entries[path] = Entry(info.st_mode)


def take(roots: list[str]) -> Snapshot:
    """Protected roots that do not exist yet are watched too: creating one is a change."""
    snapshot = Snapshot(list(roots))
    budget = [MAX_BYTES]
    for root in roots:
        _record(root, snapshot, budget)
    return snapshot


def _same(path: str, entry: Entry) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if stat.S_IFMT(info.st_mode) != stat.S_IFMT(entry.mode) or info.st_mode != entry.mode:
        return False
    if entry.target is not None:
        return os.readlink(path) == entry.target
    if entry.content is not None:
        try:
            with open(path, "rb") as handle:
                return handle.read() == entry.content
        except OSError:
            return False
    return True


def _remove(path: str) -> None:
    import shutil

    with contextlib.suppress(OSError):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def restore(snapshot: Snapshot) -> list[str]:
    """Puts the protected paths back as they were; returns those that had changed."""
    after = take(snapshot.roots)
    changed = sorted(
        {p for p in after.entries if p not in snapshot.entries}
        | {p for p, e in snapshot.entries.items() if not _same(p, e)}
    )
    for path in sorted((p for p in after.entries if p not in snapshot.entries), reverse=True):
        _remove(path)
    for path, entry in sorted(snapshot.entries.items()):
        if _same(path, entry):
            continue
        if not os.path.lexists(path) or stat.S_IFMT(os.lstat(path).st_mode) != stat.S_IFMT(
            entry.mode
        ):
            _remove(path)
        with contextlib.suppress(OSError):
            if entry.target is not None:
                os.symlink(entry.target, path)
            elif stat.S_ISDIR(entry.mode):
                os.makedirs(path, exist_ok=True)
                os.chmod(path, stat.S_IMODE(entry.mode))
            elif entry.content is not None:
                Path(path).write_bytes(entry.content)
                os.chmod(path, stat.S_IMODE(entry.mode))
    return changed
