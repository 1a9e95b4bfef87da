"""A session: its header, its conversation, and the file that records both as they grow."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agentcli import __version__
from agentcli import events as ev
from agentcli.errors import UsageError
from agentcli.messages import Conversation, Message, message_from_dict, message_to_dict
from agentcli.output.base import RunSummary
from agentcli.records import dataclass, field
from agentcli.sessions.coalesce import Coalescer
from agentcli.sessions.store import (
    FORMAT_VERSION,
    LOCK_WAIT_SECONDS,
    SessionWriter,
    describe_os_error,
    iter_records,
    new_session_id,
    sessions_dir,
)


def _warn(text: str) -> None:
    sys.stderr.write(f"agentcli: warning: {text}\n")
    sys.stderr.flush()


@dataclass(slots=True)
class Session:
    id: str
    path: Path
    header: dict[str, Any]
    conversation: Conversation
    warnings: list[str] = field(default_factory=list)
    writer: SessionWriter | None = None
    pending_partial: Message | None = None  # rebuilt from events; recorded when reopened
    unsaved: str | None = None  # why the session file is no longer written, if it is not
    on_problem: Callable[[str], None] = _warn
    _events: Coalescer | None = None  # streamed pieces on their way to the file

    # --- creating and loading

    @classmethod
    def create(cls, workspace: Path, model: str, session_id: str | None = None) -> Session:
        """A new session. When its file cannot be written (a read-only or full data
        directory), the session still runs, unsaved, after one line saying why."""
        session_id = session_id or new_session_id()
        path = sessions_dir() / f"{session_id}.jsonl"
        header = {
            "t": "session",
            "id": session_id,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "workspace": str(workspace),
            "model": model,
            "agentcli": __version__,
            "format": FORMAT_VERSION,
        }
        session = cls(session_id, path, header, Conversation())
        session._start_writing(lambda: SessionWriter(path))
        session._append(header)
        return session

    @classmethod
    def open(cls, path: Path, *, lock_wait: float = LOCK_WAIT_SECONDS) -> Session:
        """An earlier session, to continue: its file is locked first (waiting up to
        `lock_wait` seconds for another writer), then read, so no turn is missed."""
        try:
            writer: SessionWriter | OSError = SessionWriter(path, lock_wait=lock_wait)
        except OSError as error:
            writer = error
        try:
            session = cls.load(path)
        except BaseException:
            if isinstance(writer, SessionWriter):
                writer.close()
            raise
        session._start_writing(lambda: writer)
        return session

    @classmethod
    def load(cls, path: Path) -> Session:
        """A session as recorded, to read (no lock, line by line)."""
        warnings: list[str] = []
        records = iter_records(path, warnings)
        header = next(records, None)
        if header is None or header.get("t") != "session":
            raise UsageError(f"{path} is not an agentcli session file")
        session = cls(path.stem, path, header, Conversation(), warnings)
        session._restore(records)
        return session

    def _restore(self, records: Iterator[dict[str, Any]]) -> None:
        conversation = self.conversation
        partial = io.StringIO()  # text streamed after the last recorded message (compact)
        for record in records:
            kind = record.get("t")
            if kind == "message":
                conversation.messages.append(message_from_dict(record["m"]))
                partial = io.StringIO()
            elif kind == "compaction":
                conversation.summary = record.get("summary")
                conversation.start = int(record.get("start", 0))
            elif kind == "event":
                event = record.get("e", {})
                if event.get("type") == "TEXT_MESSAGE_CONTENT":
                    partial.write(event.get("delta", ""))
                elif event.get("type") == "STEP_STARTED":
                    partial = io.StringIO()
        conversation.order_results()
        if partial.tell():  # the process died while the model was answering: keep what it said
            text = partial.getvalue() + "\n[the answer was interrupted here]"
            conversation.messages.append(Message(role="assistant", content=text))
            self.pending_partial = conversation.messages[-1]

    def open_for_append(self) -> None:
        """Starts recording: messages added from now on, and events, go to the file."""
        self._start_writing(lambda: SessionWriter(self.path))

    def _start_writing(self, make: Callable[[], SessionWriter | OSError]) -> None:
        try:
            writer = make()
            if isinstance(writer, OSError):
                raise writer
        except OSError as error:
            self._lose_writer(error)
        else:
            self.writer = writer
        if self.pending_partial is not None:  # recorded now, so the file matches what is sent
            self._append({"t": "message", "m": message_to_dict(self.pending_partial)})
            self.pending_partial = None
        self.conversation.on_add = self._record_message

    # --- writing, and surviving a file that cannot be written

    def _append(self, record: dict[str, Any]) -> None:
        self._flush_pieces()
        self._write(record)

    def _write(self, record: dict[str, Any]) -> None:
        if self.writer is None:
            return
        try:
            self.writer.write(record)
        except OSError as error:
            self._lose_writer(error)

    def _lose_writer(self, error: OSError) -> None:
        """One line naming the file and the cause; the run goes on, unsaved."""
        writer, self.writer = self.writer, None
        if writer is not None:
            with contextlib.suppress(OSError):
                writer.close()
        self.unsaved = (
            f"cannot write the session file {self.path}: {describe_os_error(error)}; "
            "this session is not saved from here on"
        )
        self.on_problem(self.unsaved)

    def _record_message(self, message: Message) -> None:
        self._append({"t": "message", "m": message_to_dict(message)})

    def record_compaction(self, summary: str, start: int) -> None:
        self._append({"t": "compaction", "summary": summary, "start": start})

    def close(self) -> None:
        self._flush_pieces()
        if self.writer is not None:
            with contextlib.suppress(OSError):
                self.writer.close()
            self.writer = None

    # --- the session file as an output of the event stream

    def handle(self, event: ev.Event) -> None:
        if self.writer is None:
            return
        if self._events is None:
            self._events = Coalescer(lambda wire: self._write({"t": "event", "e": wire}))
        kind = event.type
        if kind == "TEXT_MESSAGE_CONTENT" and self._events.extend(
            kind,
            event.message_id,
            event.delta,  # type: ignore[attr-defined]
        ):
            return  # the next piece of the message being coalesced
        self._events.add(event.to_wire())

    def _flush_pieces(self) -> None:
        if self._events is not None:
            self._events.flush()

    def finish(self, summary: RunSummary) -> None:
        self._flush_pieces()


def find_session(reference: str) -> Path:
    """A session by id or unique id prefix."""
    directory = sessions_dir()
    exact = directory / f"{reference}.jsonl"
    if exact.exists():
        return exact
    matches = sorted(directory.glob(f"{reference}*.jsonl")) if reference else []
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no session {reference!r}; `agentcli sessions list` shows them")
    shown = ", ".join(m.stem for m in matches[:5])
    raise UsageError(f"{reference!r} matches several sessions ({shown}); give more of the id")


def latest_for(workspace: Path) -> Path:
    """The most recently written session of this workspace (for --continue)."""
    directory = sessions_dir()
    candidates = sorted(
        directory.glob("*.jsonl") if directory.exists() else [],
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for path in candidates:
        header = _first_record(path)
        if header and os.path.realpath(header.get("workspace", "")) == os.path.realpath(workspace):
            return path
    raise UsageError(f"no earlier session in {workspace} to continue; start one without --continue")


def _first_record(path: Path) -> dict[str, Any] | None:
    import json

    try:
        with open(path, encoding="utf-8") as stream:
            record = json.loads(stream.readline())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("t") == "session" else None
