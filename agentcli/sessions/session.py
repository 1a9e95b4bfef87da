"""A session: its header, its conversation, and the file that records both as they grow."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli import __version__
from agentcli import events as ev
from agentcli.errors import UsageError
from agentcli.messages import Conversation, Message, message_from_dict, message_to_dict
from agentcli.output.base import RunSummary
from agentcli.sessions.store import (
    FORMAT_VERSION,
    SessionWriter,
    new_session_id,
    read_records,
    sessions_dir,
)


@dataclass(slots=True)
class Session:
    id: str
    path: Path
    header: dict[str, Any]
    conversation: Conversation
    warnings: list[str] = field(default_factory=list)
    writer: SessionWriter | None = None
    pending_partial: Message | None = None  # rebuilt from events; recorded when reopened

    # --- creating and loading

    @classmethod
    def create(cls, workspace: Path, model: str, session_id: str | None = None) -> Session:
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
        session.open_for_append()
        session.writer.write(header)  # type: ignore[union-attr]
        return session

    @classmethod
    def load(cls, path: Path) -> Session:
        loaded = read_records(path)
        records = loaded.records
        if not records or records[0].get("t") != "session":
            raise UsageError(f"{path} is not an agentcli session file")
        session = cls(path.stem, path, records[0], Conversation(), loaded.warnings)
        session._restore(records[1:])
        return session

    def _restore(self, records: list[dict[str, Any]]) -> None:
        conversation = self.conversation
        partial: list[str] = []  # text streamed after the last recorded message
        for record in records:
            kind = record.get("t")
            if kind == "message":
                conversation.messages.append(message_from_dict(record["m"]))
                partial = []
            elif kind == "compaction":
                conversation.summary = record.get("summary")
                conversation.start = int(record.get("start", 0))
            elif kind == "event":
                event = record.get("e", {})
                if event.get("type") == "TEXT_MESSAGE_CONTENT":
                    partial.append(event.get("delta", ""))
                elif event.get("type") == "STEP_STARTED":
                    partial = []
        if partial:  # the process died while the model was answering: keep what it said
            text = "".join(partial) + "\n[the answer was interrupted here]"
            conversation.messages.append(Message(role="assistant", content=text))
            self.pending_partial = conversation.messages[-1]

    def open_for_append(self) -> None:
        """Starts recording: messages added from now on, and events, go to the file."""
        self.writer = SessionWriter(self.path)
        if self.pending_partial is not None:  # recorded now, so the file matches what is sent
            self.writer.write({"t": "message", "m": message_to_dict(self.pending_partial)})
            self.pending_partial = None
        self.conversation.on_add = self._record_message

    def _record_message(self, message: Message) -> None:
        if self.writer is not None:
            self.writer.write({"t": "message", "m": message_to_dict(message)})

    def record_compaction(self, summary: str, start: int) -> None:
        if self.writer is not None:
            self.writer.write({"t": "compaction", "summary": summary, "start": start})

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()

    # --- the session file as an output of the event stream

    def handle(self, event: ev.Event) -> None:
        if self.writer is not None:
            self.writer.write({"t": "event", "e": event.to_wire()})

    def finish(self, summary: RunSummary) -> None:
        pass


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
