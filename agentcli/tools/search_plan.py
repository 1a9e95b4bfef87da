"""What a search searches, for both backends of the search tools: the `path` argument
resolved and held open (so a symlink swapped in after the check cannot redirect the
search), where a walk starts, and the results' shape (matching lines by file)."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentcli.records import dataclass, field, replace
from agentcli.tools.base import ToolContext, ToolFailure
from agentcli.tools.file_access import walk_base
from agentcli.tools.ignore import SearchGlob, Tree
from agentcli.workspace.safe_open import UnsafePath, open_directory, open_parent, open_regular

if TYPE_CHECKING:
    import asyncio

MAX_LINE_CHARS = 500  # longer lines are cut, keeping the match in view
_LEAD_CHARS = 100  # how much of a long line to keep before the match


def sort_key(rel: str) -> str:
    # NUL sorts before every other character, so this orders paths component by component,
    # which is also the order of a walk that visits names sorted.
    return rel.replace("/", "\0")


@dataclass(frozen=True, slots=True)
class Target:
    """A resolved `path` argument. Results are paths relative to `base`: the workspace root
    for a path inside it; the searched directory (or a file's parent) outside it."""

    base: str
    rel: str  # the searched path relative to base; "" for base itself
    is_file: bool
    inside: bool
    shown: str  # the path as the user gave it, for messages
    real_base: str = ""  # base as shown; `base` itself may name the open directory fd
    fd: int = -1  # base, held open for the search (closed by Plan.cleanup)
    pin_rel: str = ""  # the searched directory (a file's parent), relative to base...
    pin: str = ""  # ...and a path naming it opened, so a swapped symlink cannot move it
    pin_fd: int = -1

    def display(self, rel: str) -> str:
        return rel if self.inside else os.path.join(self.real_base or self.base, rel)

    def path_of(self, rel: str) -> str:
        """Where `rel` (relative to base) is read from: through the pinned directory when
        it is below it."""
        if self.pin and rel == self.pin_rel:
            return self.pin
        if self.pin and rel.startswith(self.pin_rel + "/"):
            return os.path.join(self.pin, rel[len(self.pin_rel) + 1 :])
        return os.path.join(self.base, rel) if rel else self.base

    def where(self) -> str:
        return "the workspace" if self.inside and not self.rel else self.shown


class PinnedTree(Tree):
    """A Tree that reads the searched directory through its open fd."""

    def __init__(self, target: Target, start: str, glob: SearchGlob | None = None) -> None:
        self.target = target
        super().__init__(target.base, start, glob)

    def path(self, rel: str) -> str:
        return self.target.path_of(rel)


def _resolve(args: dict[str, Any], ctx: ToolContext) -> Target:
    requested = args.get("path") or "."
    # Resolve again right before searching: the file system may have changed since assess.
    # A search approved as one inside the workspace stays there (files.walk_base), and the
    # path is reached without following symlinks, as the file tools do.
    resolved = ctx.workspace.resolve(requested)
    path = resolved.path
    walk_from = walk_base(ctx, resolved, requested, writing=False)
    try:
        mode = stat.S_IFDIR if path == walk_from else _lstat_beneath(path, walk_from).st_mode
    except FileNotFoundError:
        raise ToolFailure(f"no such file or directory: {requested}") from None
    except UnsafePath as exc:
        raise ToolFailure(f"{requested}: {exc.strerror}") from None
    except OSError as exc:
        raise ToolFailure(f"cannot access {requested}: {exc.strerror}") from None
    is_file = stat.S_ISREG(mode)
    if not is_file and not stat.S_ISDIR(mode):
        raise ToolFailure(f"{requested} is neither a regular file nor a directory")
    if resolved.inside:
        rel = path.relative_to(ctx.workspace.root).as_posix()
        base, rel = ctx.workspace.root, "" if rel == "." else rel
    else:
        base, rel = (path.parent, path.name) if is_file else (path, "")
    fd = open_directory(base, walk_from)
    target = Target(_fd_dir(fd, base), rel, is_file, resolved.inside, requested, str(base), fd)
    pin_rel = rel.rpartition("/")[0] if is_file else rel
    if pin_rel:
        try:
            pin_fd = open_directory(path.parent if is_file else path, walk_from)
        except OSError as exc:
            os.close(fd)
            raise ToolFailure(f"{requested}: {exc.strerror}") from None
        target = replace(target, pin_rel=pin_rel, pin=_fd_dir(pin_fd, ""), pin_fd=pin_fd)
    return target


def _lstat_beneath(path: Any, walk_from: Any) -> os.stat_result:
    dir_fd = open_parent(path, walk_from)
    try:
        info = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
    finally:
        os.close(dir_fd)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(0, "it became a symbolic link after it was checked; not following it")
    return info


def _fd_dir(fd: int, fallback: Any) -> str:
    """A path naming the open directory itself, so the search (ripgrep's working directory
    included) cannot be redirected after the check: /proc/self/fd/N where there is one."""
    by_fd = f"/proc/self/fd/{fd}"
    return by_fd if os.path.isdir(by_fd) else str(fallback)


def _start(target: Target, glob: SearchGlob | None) -> str | None:
    """Where a walk has to start: the target, or a directory below it when the glob is
    anchored there (`src/app/**/*.py` needs only src/app). None: nothing can match."""
    if glob is None:
        return target.rel
    if glob.rule.dir_only and not glob.negated:
        return None  # a glob ending in `/` matches directories, never a file
    prefix = glob.anchored_prefix
    if not prefix or prefix == target.rel:
        return target.rel
    if target.rel and not prefix.startswith(target.rel + "/"):
        return target.rel if target.rel.startswith(prefix + "/") else None
    # Start lower only if the walk itself would get there: real directories (no symlinks)
    # that are neither ignored nor excluded by the glob.
    current = target.rel
    for step in prefix[len(target.rel) :].strip("/").split("/"):
        current = f"{current}/{step}" if current else step
        try:
            if not stat.S_ISDIR(os.lstat(target.path_of(current)).st_mode):
                return None
        except OSError:
            return None
    return prefix if PinnedTree(target, target.rel, glob).enters(prefix) else None


@dataclass(slots=True)
class Plan:
    """A search prepared off the event loop: what to search and where a walk starts."""

    target: Target
    start: str | None  # where the walk starts; None when nothing can match
    glob: SearchGlob | None
    temp_files: list[str] = field(default_factory=list)  # a backend's, removed at cleanup

    def cleanup(self) -> None:
        for fd in (self.target.fd, self.target.pin_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        for path in self.temp_files:
            with contextlib.suppress(OSError):
                os.unlink(path)


async def prepare(args: dict[str, Any], ctx: ToolContext, glob: SearchGlob | None) -> Plan:
    """The plan, made in a thread. If the caller is cancelled meanwhile, the plan still
    gets cleaned up (its directories are open) once the thread is done."""
    import asyncio

    future = asyncio.ensure_future(asyncio.to_thread(_plan, args, ctx, glob))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        future.add_done_callback(_cleanup_abandoned)
        raise


def _cleanup_abandoned(future: asyncio.Future[Plan]) -> None:
    if not future.cancelled() and future.exception() is None:
        future.result().cleanup()


def _plan(args: dict[str, Any], ctx: ToolContext, glob: SearchGlob | None) -> Plan:
    target = _resolve(args, ctx)
    if target.is_file:
        return Plan(target, target.rel, None)
    return Plan(target, _start(target, glob), glob)


def open_found(path: str) -> Any:
    """A file the walk found, opened only if it still is a regular file (not a symlink or a
    FIFO swapped in since, which would redirect or block the search)."""
    head, name = os.path.split(path)
    dir_fd = os.open(head or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        return os.fdopen(open_regular(dir_fd, name), "rb")
    finally:
        os.close(dir_fd)


async def in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Runs blocking work in a thread; if the caller is cancelled, the work stops at its
    next check of the `stop` callable it gets as the last argument."""
    import asyncio

    stop = threading.Event()
    try:
        return await asyncio.to_thread(fn, *args, stop.is_set)
    finally:
        stop.set()


# ---------------------------------------------------------------------------------------
# Results


@dataclass(slots=True)
class Line:
    number: int
    is_match: bool
    text: str  # ready to show: no line terminator, long lines cut


@dataclass(slots=True)
class FileHits:
    """One file's matching lines (and context), from either backend."""

    path: str  # relative to the target's base
    matches: int  # matching lines in the file
    lines: list[Line] = field(default_factory=list)
    raw: list[bytes] | None = None  # a backend's records, parsed only if shown...
    parse: Callable[[bytes], Line] | None = None  # ...by this

    def records(self) -> list[Line]:
        if self.raw is not None and self.parse is not None:
            self.lines = [self.parse(record) for record in self.raw]
            self.raw = None
        return self.lines


def _clip(text: str, column: int) -> str:
    """Cuts a line to MAX_LINE_CHARS characters, keeping the match at `column` in view."""
    if len(text) <= MAX_LINE_CHARS:
        return text
    start = max(0, min(column - _LEAD_CHARS, len(text) - MAX_LINE_CHARS))
    end = start + MAX_LINE_CHARS
    return (
        ("[…] " if start else "")
        + text[start:end]
        + (" [… line truncated]" if end < len(text) else "")
    )


def display(line: str, column: int) -> str:
    """A line as shown: without a `\\r` before its end, cut around `column`."""
    return _clip(line[:-1] if line.endswith("\r") else line, column)
