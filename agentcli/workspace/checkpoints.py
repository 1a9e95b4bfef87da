"""Checkpoints: what a turn is about to change in the workspace, kept before it changes, so
that `/rewind` and `agentcli sessions rewind` can put it back.

Each session has a directory in the data directory (never in the workspace):
`checkpoints/ID/objects/SHA256` holds each content once, named by its hash, and
`checkpoints/ID/log.jsonl` says, in the order it happened, which turn changed which file from
what to what (a file's state is its hash and size, "none" for a missing file, a directory,
or something else — a link, a FIFO — that is never read). The log is only appended to.

Every path is reached from the workspace root through descriptors without following a link
(agentcli.workspace.safe_open): a link planted in the workspace is recorded as a link, its
target never read. `.git` and `.agentcli` are never recorded. The contents kept are bounded
by `checkpoints.max_bytes`: past it the oldest are dropped (other sessions' first, then this
session's in the order they were kept); a file over `checkpoints.max_file_bytes` is never
read, only its size and modification time recorded, and a rewind says it cannot bring it
back."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentcli.paths import data_dir
from agentcli.records import dataclass
from agentcli.workspace.safe_open import UnsafePath, open_parent, open_regular, special_kind

State = dict[str, Any]
NONE: State = {"kind": "none"}
DIRECTORY: State = {"kind": "dir"}
PROTECTED_NAMES = frozenset({".git", ".agentcli"})  # never recorded, never restored
MAX_SCANNED = 20_000  # files a command's scan looks at; beyond, its changes are not all seen
SETTLED_NS = 1_000_000_000  # a file changed this recently may change unseen by its mtime
_CHUNK = 1 << 20


def checkpoints_dir() -> Path:
    return data_dir() / "checkpoints"


def same(a: State, b: State) -> bool:
    """Whether two states are the same content (or both missing, both directories)."""
    if a.get("kind") != b.get("kind"):
        return False
    if a["kind"] == "file":
        return a.get("sha256") == b.get("sha256")
    if a["kind"] == "other":
        return a.get("what") == b.get("what")
    return True


def protected(rel: str) -> bool:
    return any(part.casefold() in PROTECTED_NAMES for part in rel.split("/"))


@dataclass(frozen=True, slots=True)
class Turn:
    """The turn a change belongs to: its user message's id, number and prompt."""

    id: str
    number: int
    prompt: str


class Checkpoints:
    """One session's checkpoints: reading states, keeping contents, appending the log."""

    def __init__(
        self,
        session_id: str,
        root: Path,
        *,
        max_bytes: int = 200_000_000,
        max_file_bytes: int = 2_000_000,
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self.directory = checkpoints_dir() / session_id
        self.objects = self.directory / "objects"
        self.log_path = self.directory / "log.jsonl"
        self.max_bytes = max_bytes
        self.max_file_bytes = max_file_bytes
        self.problem: str | None = None  # why checkpoints stopped, once said
        self._gaps: set[str] = set()  # turns whose record is said to be incomplete
        self._lock = threading.Lock()
        self._stamps: dict[str, tuple[tuple[int, ...], State]] = {}
        self._marked: set[str] | None = None  # turns with a marker in the log
        self._order: dict[str, int] | None = None  # this session's objects, oldest first
        self._total: int | None = None  # bytes of every session's objects
        home = os.path.realpath(checkpoints_dir())
        if home == str(self.root) or home.startswith(str(self.root) + os.sep):
            self.problem = "the data directory is inside the workspace; checkpoints are off"
        elif max_bytes <= 0:
            self.problem = "checkpoints.max_bytes is 0; checkpoints are off"

    @property
    def enabled(self) -> bool:
        return self.problem is None

    # --- paths and states

    def relative(self, path: Path | str) -> str | None:
        """`path` as the log names it (relative to the root), or None when it is not in
        the workspace or is a protected path (never recorded)."""
        real = os.path.abspath(path)
        root = str(self.root)
        if not real.startswith(root + os.sep):
            return None
        rel = real[len(root) + 1 :].replace(os.sep, "/")
        return None if not rel or protected(rel) else rel

    def state(self, rel: str, *, keep: bool = True) -> State:
        """What `rel` is now, its content kept (when `keep` and small enough to)."""
        path = self.root / rel
        try:
            dir_fd = open_parent(path, self.root)
        except (FileNotFoundError, NotADirectoryError):
            return dict(NONE)
        except UnsafePath:
            return {"kind": "other", "what": "a symbolic link on the way"}
        except OSError as error:
            return {"kind": "other", "what": error.strerror or "unreadable"}
        try:
            return self._state_at(dir_fd, path.name, rel, keep)
        finally:
            os.close(dir_fd)

    def _state_at(self, dir_fd: int, name: str, rel: str, keep: bool) -> State:
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return dict(NONE)
        except OSError as error:
            return {"kind": "other", "what": error.strerror or "unreadable"}
        if stat.S_ISDIR(info.st_mode):
            return dict(DIRECTORY)
        if stat.S_ISLNK(info.st_mode):
            return {"kind": "other", "what": "a symbolic link"}
        kind = special_kind(info.st_mode)
        if kind is not None or not stat.S_ISREG(info.st_mode):
            return {"kind": "other", "what": kind or "not a regular file"}
        if info.st_size > self.max_file_bytes:  # never read: known by size and time alone
            mark = f"size:{info.st_size}:mtime:{info.st_mtime_ns}"
            return {"kind": "file", "sha256": mark, "size": info.st_size, "kept": False}
        stamp = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        cached = self._stamps.get(rel)
        if cached is not None and cached[0] == stamp and self._still_good(cached[1], keep):
            return dict(cached[1])
        try:
            fd = open_regular(dir_fd, name)
        except (UnsafePath, OSError) as error:
            return {"kind": "other", "what": error.strerror or "unreadable"}
        state = self._read(fd, keep)
        if time.time_ns() - info.st_mtime_ns > SETTLED_NS:
            self._stamps[rel] = (stamp, state)
        return dict(state)

    def _still_good(self, state: State, keep: bool) -> bool:
        if not keep or not state.get("kept"):
            return not keep or state.get("size", 0) > self.max_file_bytes
        return (self.objects / state["sha256"]).exists()  # not dropped by the bound since

    def _read(self, fd: int, keep: bool) -> State:
        digest, size, chunks = hashlib.sha256(), 0, []
        with os.fdopen(fd, "rb") as stream:
            while chunk := stream.read(_CHUNK):
                digest.update(chunk)
                size += len(chunk)
                if size <= self.max_file_bytes:
                    chunks.append(chunk)
        sha = digest.hexdigest()
        kept = keep and size <= self.max_file_bytes and self._keep(sha, b"".join(chunks))
        return {"kind": "file", "sha256": sha, "size": size, "kept": kept}

    # --- contents, bounded

    def _keep(self, sha: str, data: bytes) -> bool:
        """Stores `data` as object `sha` (once); False when it cannot be stored."""
        target = self.objects / sha
        with self._lock:
            order = self._object_order()
            if target.exists():
                with contextlib.suppress(OSError):
                    os.utime(target)
                order[sha] = order.pop(sha, len(data))  # the newest again
                return True
            try:
                self.objects.mkdir(parents=True, exist_ok=True)
                temp = self.objects / f".{sha}.{os.urandom(4).hex()}.tmp"
                temp.write_bytes(data)
                os.replace(temp, target)
            except OSError as error:
                self._stop(f"cannot write {self.objects}: {error.strerror}")
                return False
            self._total = self._all_bytes() + len(data)
            order[sha] = len(data)
            self._bound()
            return target.exists()

    def _object_order(self) -> dict[str, int]:
        if self._order is None:
            found = []
            with contextlib.suppress(OSError), os.scandir(self.objects) as scan:
                for entry in scan:
                    with contextlib.suppress(OSError):
                        info = entry.stat(follow_symlinks=False)
                        if not entry.name.startswith("."):
                            found.append((info.st_mtime_ns, entry.name, info.st_size))
            self._order = {name: size for _, name, size in sorted(found)}
        return self._order

    def _all_bytes(self) -> int:
        if self._total is None:
            self._total = sum(size for _, _, size in self._other_objects()) + sum(
                self._object_order().values()
            )
        return self._total

    def _other_objects(self) -> Iterator[tuple[Path, Path, int]]:
        """(session directory, object, size) of the other sessions, the oldest session first."""
        sessions = []
        with contextlib.suppress(OSError), os.scandir(checkpoints_dir()) as scan:
            for entry in scan:
                if entry.name == self.directory.name or not entry.is_dir(follow_symlinks=False):
                    continue
                log = Path(entry.path) / "log.jsonl"
                with contextlib.suppress(OSError):
                    sessions.append((log.stat().st_mtime_ns, Path(entry.path)))
        for _, directory in sorted(sessions):
            with contextlib.suppress(OSError), os.scandir(directory / "objects") as scan:
                for entry in sorted(scan, key=lambda e: e.name):
                    with contextlib.suppress(OSError):
                        size = entry.stat(follow_symlinks=False).st_size
                        yield directory, Path(entry.path), size

    def _bound(self) -> None:
        """Drops the oldest contents until what is kept fits checkpoints.max_bytes."""
        if self._all_bytes() <= self.max_bytes:
            return
        for _, path, size in list(self._other_objects()):
            if self._total is not None and self._total <= self.max_bytes:
                return
            with contextlib.suppress(OSError):
                path.unlink()
                self._total = (self._total or 0) - size
        order = self._object_order()
        for sha in list(order):
            if (self._total or 0) <= self.max_bytes:
                return
            with contextlib.suppress(OSError):
                (self.objects / sha).unlink()
            self._total = (self._total or 0) - order.pop(sha)

    def content(self, state: State) -> bytes | None:
        """The content a state recorded, None when it was not kept or has been dropped."""
        if state.get("kind") != "file" or not state.get("kept"):
            return None
        try:
            data = (self.objects / state["sha256"]).read_bytes()
        except OSError:
            return None
        return data if hashlib.sha256(data).hexdigest() == state["sha256"] else None

    # --- what a command changed

    def scan(self, *, keep: bool = True) -> tuple[dict[str, State], bool]:
        """Every file of the workspace a command may have changed (not .git, .agentcli,
        nor what .gitignore ignores), with its state; and whether the scan saw them all."""
        from agentcli.tools.ignore import Tree

        states: dict[str, State] = {}
        complete = True
        for rel in Tree(str(self.root), "").walk():
            if protected(rel):
                continue
            if len(states) >= MAX_SCANNED:
                complete = False
                break
            states[rel] = self.state(rel, keep=keep)
        return states, complete

    # --- the log

    def _append(self, records: list[dict[str, Any]]) -> None:
        if not records or not self.enabled:
            return
        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
        with self._lock:
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, lines)
                finally:
                    os.close(fd)
            except OSError as error:
                self._stop(f"cannot write {self.log_path}: {error.strerror}")

    def _marker(self, turn: Turn) -> list[dict[str, Any]]:
        """The turn's marker, when the log has none yet (it comes before its records)."""
        marked = self._turns_marked()
        if turn.id in marked:
            return []
        marked.add(turn.id)
        return [
            {
                "t": "turn",
                "turn": turn.id,
                "n": turn.number,
                "prompt": turn.prompt[:200],
                "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
        ]

    def gap(self, turn: Turn, by: str, why: str) -> bool:
        """Says in the log that `turn`'s record is incomplete (once a turn): a rewind past
        it tells what it cannot know. True the first time for the turn."""
        if turn.id in self._gaps:
            return False
        self._gaps.add(turn.id)
        self._append([*self._marker(turn), {"t": "gap", "turn": turn.id, "by": by, "why": why}])
        return True

    def _stop(self, why: str) -> None:
        if self.problem is None:
            self.problem = f"{why}; checkpoints are off from here on"

    def record(self, turn: Turn, by: str, changes: list[tuple[str, State, State]]) -> None:
        """`changes` (path, before, after) that `by` made in `turn`; the turn's marker first."""
        changes = [(rel, b, a) for rel, b, a in changes if not same(b, a)]
        if not changes:
            return
        records = self._marker(turn)
        records += [
            {"t": "change", "turn": turn.id, "by": by, "path": rel, "before": b, "after": a}
            for rel, b, a in changes
        ]
        self._append(records)

    def _turns_marked(self) -> set[str]:
        if self._marked is None:
            self._marked = {r["turn"] for r in self.log() if r.get("t") == "turn"}
        return self._marked

    def log(self) -> list[dict[str, Any]]:
        """The log's records, in order; a damaged line is left out."""
        return read_log(self.log_path)


def checkpoints_for(config: Any, session_id: str, root: Path) -> Checkpoints:
    """A session's checkpoints, bounded as the configuration says."""
    return Checkpoints(
        session_id,
        root,
        max_bytes=config.get("checkpoints.max_bytes"),
        max_file_bytes=config.get("checkpoints.max_file_bytes"),
    )


def read_log(path: Path) -> list[dict[str, Any]]:
    records = []
    try:
        with open(path, "rb") as stream:
            for line in stream:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                usable = isinstance(record, dict) and isinstance(record.get("turn"), str)
                if usable and (record.get("t") != "change" or _change_ok(record)):
                    records.append(record)
    except OSError:
        return []
    return records


def _change_ok(record: dict[str, Any]) -> bool:
    path = record.get("path")
    states = (record.get("before"), record.get("after"))
    if not isinstance(path, str) or not path or path.startswith("/") or ".." in path.split("/"):
        return False
    return all(isinstance(s, dict) and isinstance(s.get("kind"), str) for s in states)
