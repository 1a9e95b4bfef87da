"""Session files: one JSON record per line, appended and flushed as it happens.

Each line reaches the kernel as soon as it is written (so `kill -9` at any moment loses
nothing written before), and a background thread fsyncs the file after every batch of
lines (so a machine crash loses at most the last moments). A truncated last line, the mark
of a kill in the middle of a write, is skipped on load with a warning."""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.paths import data_dir

FORMAT_VERSION = 1


def sessions_dir() -> Path:
    return data_dir() / "sessions"


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class SessionWriter:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        ends_cleanly = _ends_with_newline(path)
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        if not ends_cleanly:  # a kill cut the last line: end it, so it stays a lone bad line
            self._file.write("\n")
        self._dirty = threading.Event()
        self._closing = False
        self._syncer = threading.Thread(target=self._sync_loop, name="session-fsync", daemon=True)
        self._syncer.start()

    def write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._file.flush()  # into the kernel: safe from kill -9 from here on
        self._dirty.set()

    def _sync_loop(self) -> None:
        while True:
            self._dirty.wait()
            self._dirty.clear()
            if self._closing:
                return
            try:
                os.fsync(self._file.fileno())
            except (OSError, ValueError):
                return

    def close(self) -> None:
        if self._file.closed:
            return
        self._file.flush()
        os.fsync(self._file.fileno())
        self._closing = True
        self._dirty.set()
        self._syncer.join(timeout=2)
        self._file.close()


def _ends_with_newline(path: Path) -> bool:
    try:
        with open(path, "rb") as stream:
            stream.seek(-1, os.SEEK_END)
            return stream.read(1) == b"\n"
    except (FileNotFoundError, OSError):  # missing or empty
        return True


@dataclass(slots=True)
class LoadedFile:
    records: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)


def read_records(path: Path) -> LoadedFile:
    """All intact records. A truncated or corrupt line is skipped with a warning."""
    loaded = LoadedFile([])
    with open(path, encoding="utf-8", errors="replace") as stream:
        lines = stream.readlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            where = "its last line" if number == len(lines) else f"line {number}"
            loaded.warnings.append(
                f"session {path.stem}: skipped {where}, which was cut off or damaged"
            )
            continue
        if isinstance(record, dict):
            loaded.records.append(record)
    return loaded
