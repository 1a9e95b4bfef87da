"""A session: its header, its conversation, and the file that records both as they grow."""

from __future__ import annotations

import contextlib
import errno
import io
import itertools
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agentcli import __version__
from agentcli.conversation import events as ev
from agentcli.conversation.messages import Conversation, Message, message_to_dict
from agentcli.errors import UsageError
from agentcli.output.base import RunSummary
from agentcli.output.nested import is_nested
from agentcli.records import dataclass, field
from agentcli.sessions.coalesce import Coalescer
from agentcli.sessions.images import images_dir
from agentcli.sessions.shapes import CONTENT_IN_EVENT, Entry, session_entries
from agentcli.sessions.store import (
    FORMAT_VERSION,
    LOCK_WAIT_SECONDS,
    Cursor,
    RecordWriter,
    SessionWriter,
    describe_os_error,
    iter_lines,
    new_session_id,
    sessions_dir,
    unreadable,
)

# Errors that mean the whole data directory cannot take more: a full disk or quota, a
# read-only file system, a file-size limit (what a full disk is tested with).
DIRECTORY_WIDE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})


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
    writer: RecordWriter | None = None
    pending_partial: Message | None = None  # rebuilt from events; recorded when reopened
    unsaved: str | None = None  # why the session file is no longer written, if it is not
    saves_outputs: bool = True  # command outputs are still saved beside it
    on_problem: Callable[[str], None] = _warn
    _events: Coalescer | None = None  # streamed pieces on their way to the file
    # The result event just written (call id, content): the tool message that follows it
    # with the same content refers to it instead of storing the content a second time.
    _last_result: tuple[str, str] | None = None
    # AG-UI state as the recorded STATE_SNAPSHOT / STATE_DELTA events left it (a served
    # thread's state, kept across its runs); None when none was recorded.
    state: Any = None
    # A served thread's forwardedProps, as its runs recorded them (a `forwarded_props`
    # CUSTOM event): (how many messages came before it, the value), for `sessions show`.
    forwarded_props: list[tuple[int, Any]] = field(default_factory=list)
    # How far the file is known (read, or written by this session's writer): a session
    # kept in memory between runs reads only what was appended after it (catch_up).
    read_to: Cursor = field(default_factory=Cursor)
    # The largest stored image read back to be sent on (images.max_bytes); None: a session
    # read to be shown, whose images are described by their references, never read.
    image_limit: int | None = None

    # --- creating and loading

    @classmethod
    def create(
        cls,
        workspace: Path,
        model: str,
        session_id: str | None = None,
        writer: Callable[[], RecordWriter] | None = None,
    ) -> Session:
        """A new session. When its file cannot be written (a read-only or full data
        directory), the session still runs, unsaved, after one line saying why.
        `writer`: what records it instead of its file (a store's RowWriter)."""
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
        session.start_writing(writer or (lambda: SessionWriter(path)), header=True)
        return session

    @classmethod
    def open(
        cls, path: Path, *, lock_wait: float = LOCK_WAIT_SECONDS, images: int | None = None
    ) -> Session:
        """An earlier session, to continue: its file is locked first (waiting up to
        `lock_wait` seconds for another writer), then read, so no turn is missed. With
        `images` (images.max_bytes), its stored images are read to be sent on."""
        try:
            writer: SessionWriter | OSError = SessionWriter(path, lock_wait=lock_wait)
        except OSError as error:
            writer = error
        try:
            session = cls.load(path, images=images)
        except BaseException:
            if isinstance(writer, SessionWriter):
                writer.close()
            raise
        session.start_writing(lambda: writer)
        return session

    @classmethod
    def load(cls, path: Path, *, images: int | None = None) -> Session:
        """A session as recorded, to read (no lock, line by line). Lines that cannot be
        used are skipped, each said in `warnings`; a damaged header leaves the session
        readable, known by its file name. Its images are read only with `images` (the
        largest to read): to show a session, their references describe them."""
        warnings: list[str] = []
        cursor = Cursor()
        entries = session_entries(path, warnings, images=images, cursor=cursor)
        first = next(entries, None)
        if first is None:
            raise UsageError(f"{path} is not an agentcli session file (no line of one)")
        session = cls.restored(path, itertools.chain([first], entries), warnings, cursor)
        session.image_limit = images  # what catch_up reads later is read as this was
        return session

    @classmethod
    def restored(
        cls, path: Path, entries: Iterator[Entry], warnings: list[str], read_to: Cursor
    ) -> Session:
        """A session from its recorded entries (a file's lines or a store's rows), read
        through: the header, when the first is one, then the conversation."""
        first = next(entries, None)
        header: dict[str, Any] = {"t": "session", "id": path.stem}
        if first is not None and first.kind == "header":
            header = first.value
        elif first is not None:
            entries = itertools.chain([first], entries)
        session = cls(path.stem, path, header, Conversation(), warnings, read_to=read_to)
        session.restore(entries)
        return session

    def catch_up(self, *, lock_wait: float = LOCK_WAIT_SECONDS) -> bool:
        """This session, kept in memory since it was closed (a served thread between its
        runs), locked again and brought up to date by reading only what its file gained
        since (another process's turns). False, holding nothing, when the file is no
        longer the one known (replaced, cut shorter, or not written to the end): then it
        is to be opened anew. Raises SessionBusyError and OSError as SessionWriter does."""
        if self.unsaved is not None or self.writer is not None:
            return False
        writer = SessionWriter(self.path, lock_wait=lock_wait)
        try:
            file, size = writer.end()
            known = self.read_to
            if file != known.file or size < known.offset:
                writer.close()
                return False
            if size > known.offset:
                limit = self.image_limit
                self.restore(session_entries(self.path, self.warnings, images=limit, cursor=known))
                if known.file != file:  # replaced between the lock and the read
                    writer.close()
                    return False
        except BaseException:
            writer.close()
            raise
        self._last_result = None
        self.start_writing(lambda: writer)
        return True

    def continue_writing(self, make: Callable[[], RecordWriter]) -> None:
        """A kept or read session recording again, through `make`'s writer (a store's)."""
        self._last_result = None
        self.start_writing(make)

    def restore(self, entries: Iterator[Entry]) -> None:
        """The conversation, the state and an interrupted answer, from recorded entries."""
        conversation = self.conversation
        partial = io.StringIO()  # text streamed after the last recorded message (compact)
        for entry in entries:
            if entry.kind == "message":
                conversation.messages.append(entry.value)
                partial = io.StringIO()
            elif entry.kind == "compaction":
                conversation.summary = entry.value.summary
                conversation.start = entry.value.start
            elif entry.kind == "rewound":
                cut_conversation(conversation, entry.value.messages)
                kept = len(conversation.messages)
                self.forwarded_props = [f for f in self.forwarded_props if f[0] <= kept]
                partial = io.StringIO()
            elif entry.kind == "event":
                event = entry.value
                if is_nested(event):
                    continue  # a subagent's: its answer is its call's result, not this one's
                if event["type"] == "TEXT_MESSAGE_CONTENT":
                    partial.write(event["delta"])
                elif event["type"] == "STEP_STARTED":
                    partial = io.StringIO()
                else:
                    self._note(event)
        conversation.start = min(conversation.start, len(conversation.messages))
        conversation.order_results()
        strays = conversation.drop_strays()
        if strays:
            self.warnings.append(
                f"{self.path}: {strays} tool result(s) whose call is not in the session "
                "(or that answer a call twice) are left out"
            )
        if partial.tell():  # the process died while the model was answering: keep what it said
            text = partial.getvalue() + "\n[the answer was interrupted here]"
            conversation.messages.append(Message(role="assistant", content=text))
            self.pending_partial = conversation.messages[-1]

    def _note(self, event: dict[str, Any]) -> None:
        """What an event (not a subagent's) tells of the thread besides its messages: its
        state, its forwardedProps; alike when read back and when recorded."""
        if event["type"] in ("STATE_SNAPSHOT", "STATE_DELTA"):
            self._restore_state(event)
        elif is_forwarded_props(event):
            self.forwarded_props.append((len(self.conversation.messages), event.get("value")))

    def _restore_state(self, event: dict[str, Any]) -> None:
        if event["type"] == "STATE_SNAPSHOT":
            state = event.get("snapshot")
        else:
            import jsonpatch  # only for a session that recorded a delta

            try:
                base = {} if self.state is None else self.state  # AG-UI's state before any
                state = jsonpatch.apply_patch(base, event.get("delta") or [])
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError) as e:
                self.warnings.append(f"a recorded STATE_DELTA does not apply ({e}); skipped")
                return
        from agentcli.json_depth import MAX_DEPTH, too_deep

        if too_deep(state):  # an older agentcli took it: sent on, every later run would fail
            self.warnings.append(
                f"a recorded {event['type']} nests the state deeper than {MAX_DEPTH} levels; "
                "skipped (the state stays as it was before it)"
            )
            return
        self.state = state

    def open_for_append(self) -> None:
        """Starts recording: messages added from now on, and events, go to the file."""
        self.start_writing(lambda: SessionWriter(self.path))

    def start_writing(
        self, make: Callable[[], RecordWriter | OSError], *, header: bool = False
    ) -> None:
        """Records from now on through the writer `make` gives (or says once why it cannot:
        the session runs on, unsaved); `header`: a new file, which starts with it."""
        try:
            writer = make()
            if isinstance(writer, OSError):
                raise writer
        except OSError as error:
            self._lose_writer(error)
        else:
            self.writer = writer
        if header:
            self._append(self.header)
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

    def _lose_writer(self, error: OSError, path: Path | None = None) -> None:
        """One line naming the file and the cause; the run goes on, unsaved. When the
        whole data directory is out (full, read-only), command outputs stop too and the
        same line says so: a run says once that it is not being saved."""
        writer, self.writer = self.writer, None
        self.read_to = Cursor()  # what the file holds is no longer known
        if writer is not None:
            with contextlib.suppress(OSError):
                writer.close()
        what = f"the session file {self.path}" if path is None else str(path)
        if error.errno in DIRECTORY_WIDE:
            self.saves_outputs = False
            self.unsaved = (
                f"cannot write {what}: {describe_os_error(error)}; this session and its "
                "command outputs are not saved from here on"
            )
        else:
            self.unsaved = (
                f"cannot write {what}: {describe_os_error(error)}; this session is not "
                "saved from here on"
            )
        self.on_problem(self.unsaved)

    def output_failed(self, path: Path, error: OSError) -> None:
        """A command's output could not be saved to `path` (the model still gets what
        fits in its limit). Said once; a full or read-only data directory stops the
        session file as well, in the same line."""
        if not self.saves_outputs:
            return
        self.saves_outputs = False
        if error.errno in DIRECTORY_WIDE and self.unsaved is None:
            self._lose_writer(error, path)
            return
        self.on_problem(
            f"cannot write {path}: {describe_os_error(error)}; command outputs are not saved "
            "from here on (the model still gets what fits in shell.output_limit)"
        )

    def _record_message(self, message: Message) -> None:
        data: dict[str, Any] = message_to_dict(message)
        if message.images and self.writer is not None:
            data["images"] = self._stored_images(message)
        last, self._last_result = self._last_result, None
        if message.role == "tool" and last == (message.tool_call_id, message.content):
            del data["content"]
            data[CONTENT_IN_EVENT] = True
        self._append({"t": "message", "m": data})

    def _stored_images(self, message: Message) -> list[dict[str, Any]]:
        """References to the message's images, each stored once beside the file."""
        try:
            return self.writer.store_images(message.images)  # type: ignore[union-attr]
        except OSError as error:
            self.on_problem(
                f"cannot store an image in {images_dir(self.path)}: {describe_os_error(error)}; "
                "a resumed session gives the model its description"
            )
            return []

    def rewind_to(self, messages: int) -> None:
        """The conversation back to its first `messages` (`/rewind`): recorded as a
        `rewound` line, so the file stays append-only and every reader honours it."""
        cut_conversation(self.conversation, messages)
        turns = sum(1 for m in self.conversation.messages if m.role == "user")
        self._append({"t": "rewound", "messages": messages, "turns": turns})

    def record_compaction(self, summary: str, start: int) -> None:
        self._append({"t": "compaction", "summary": summary, "start": start})

    def close(self) -> None:
        self._flush_pieces()
        if self.writer is not None:
            try:  # the file ends with what this writer wrote: known up to there
                file, size = self.writer.end()
                self.read_to = Cursor(file, size, self.read_to.line + self.writer.lines)
            except OSError:
                self.read_to = Cursor()
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
        wire = event.to_wire()
        self._events.add(wire)
        if kind in ("STATE_SNAPSHOT", "STATE_DELTA", "CUSTOM") and not is_nested(wire):
            self._note(wire)  # kept as a reload would find it (a served thread's next run)
        if isinstance(event, ev.ToolCallResult) and self.writer is not None:
            self._last_result = (event.tool_call_id, event.content)

    nested = handle  # a subagent's events, recorded under the call that started it

    def _flush_pieces(self) -> None:
        if self._events is not None:
            self._events.flush()

    def finish(self, summary: RunSummary) -> None:
        self._flush_pieces()


def is_forwarded_props(event: dict[str, Any]) -> bool:
    """agentcli serve's record of a client's forwardedProps (not a remote agent's CUSTOM
    event of that name, which is relayed: metadata.relayedFrom)."""
    metadata = event.get("metadata")
    relayed = isinstance(metadata, dict) and ev.RELAYED_FROM in metadata
    return event["type"] == "CUSTOM" and event.get("name") == "forwarded_props" and not relayed


def cut_conversation(conversation: Conversation, messages: int) -> None:
    """Keeps the first `messages`; a summary of messages no longer there goes too."""
    del conversation.messages[messages:]
    if conversation.start > messages:
        conversation.summary, conversation.start = None, 0


def find_session(reference: str) -> Path:
    """A session by id or unique id prefix. An id is a name in the sessions directory,
    never a path: `../x` would name (and `sessions rm` remove) a file outside it."""
    directory = sessions_dir()
    if not reference or "/" in reference or "\0" in reference or reference in (".", ".."):
        raise UsageError(
            f"no session {reference!r}: a session id is a name such as 20260101-120000-ab12cd, "
            "not a path; `agentcli sessions list` shows them"
        )
    exact = directory / f"{reference}.jsonl"
    if exact.exists():
        return exact
    # By name, not by glob: `*` or `[` in a reference is part of it, not a pattern.
    matches = sorted(
        directory / name
        for name in _names(directory)
        if name.startswith(reference) and name.endswith(".jsonl")
    )
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no session {reference!r}; `agentcli sessions list` shows them")
    shown = ", ".join(m.stem for m in matches[:5])
    raise UsageError(f"{reference!r} matches several sessions ({shown}); give more of the id")


def _names(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return []
    except OSError as error:
        raise unreadable(directory, error) from None


def session_files(directory: Path) -> list[tuple[int, Path]]:
    """(modified, path) of each session file, the latest first. A directory that cannot
    be read is one clear error; a file removed meanwhile is left out."""
    try:
        with os.scandir(directory) as scan:
            found = [entry for entry in scan if entry.name.endswith(".jsonl")]
    except FileNotFoundError:
        return []
    except OSError as error:
        raise unreadable(directory, error) from None
    dated = []
    for entry in found:
        try:
            dated.append((entry.stat().st_mtime_ns, Path(entry.path)))
        except OSError:
            continue
    dated.sort(key=lambda item: (item[0], item[1].name), reverse=True)
    return dated


def latest_for(workspace: Path) -> Path:
    """The most recently written session of this workspace (for --continue). A newer
    session whose header cannot be read is said, with how to continue it."""
    here = os.path.realpath(workspace)
    for _, path in session_files(sessions_dir()):
        header, problem = _header(path)
        if header is not None and os.path.realpath(header.get("workspace", "")) == here:
            return path
        if problem:
            _warn(problem)
    raise UsageError(f"no earlier session in {workspace} to continue; start one without --continue")


def _header(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The file's header, or why it has none (None, None: an empty file)."""
    from agentcli.errors import AgentCliError
    from agentcli.sessions.shapes import BadRecord, header_of

    resume = f"--continue cannot tell its workspace (agentcli --resume {path.stem} continues it)"
    try:
        for number, record in iter_lines(path, lambda number, why: None):
            if number == 1 and record.get("t") == "session":
                return header_of(record), None
            return None, f"{path}: its header (line 1) is damaged; {resume}"
    except BadRecord as bad:
        return None, f"{path}: its header (line 1) is damaged ({bad}); {resume}"
    except AgentCliError as error:
        return None, f"{error}; --continue leaves it out"
    return None, None
