"""The records of a session file, read one line at a time and checked before anything uses
them. A line of any other shape — cut by a crash, damaged on disk, written by another
version, edited by hand — is skipped with a warning naming the file and the line, and the
rest of the session reads as if it were not there."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from agentcli.conversation.images import ImagePart
from agentcli.conversation.messages import Message, message_from_dict
from agentcli.output.nested import is_nested
from agentcli.records import dataclass
from agentcli.sessions.images import check_refs, images_dir, load_images
from agentcli.sessions.repairs import repaired
from agentcli.sessions.store import Cursor, iter_lines

ROLES = ("system", "user", "assistant", "tool")
HEADER_FIELDS = ("id", "created", "workspace", "model", "agentcli")
CONTENT_IN_EVENT = "contentInEvent"  # a tool message whose content is its result event's
SHOWN_WARNINGS = 5  # per file: the rest are counted in one more line
# (references, the largest to read) -> (the images, why each other could not be had): a
# store's own way to load them
ImageLoader = Callable[[list[dict[str, Any]], int], tuple[list[ImagePart], list[str]]]


class BadRecord(ValueError):
    """A line that is JSON but not a record agentcli can use; the text says what it is."""


@dataclass(frozen=True, slots=True)
class Compaction:
    summary: str
    start: int  # the first message sent verbatim after it


@dataclass(frozen=True, slots=True)
class Rewound:
    """The conversation taken back (`/rewind`): only its first `messages` stay, which
    hold `turns` user turns. The file stays append-only; readers honour it."""

    messages: int
    turns: int


@dataclass(frozen=True, slots=True)
class Entry:
    """One usable line: `kind` is header, message, compaction, rewound or event."""

    kind: str
    value: Any  # dict[str, str] | Message | Compaction | dict[str, Any] (the event)


def _text(data: dict[str, Any], key: str, what: str, *, optional: bool = True) -> str | None:
    if key not in data and optional:
        return None
    value = data.get(key)
    if not isinstance(value, str):
        raise BadRecord(f"{what} whose {key} is not text")
    return value


def header_of(record: dict[str, Any]) -> dict[str, Any]:
    header: dict[str, Any] = {"t": "session"}
    for key in HEADER_FIELDS:
        value = _text(record, key, "a header")
        if value is not None:
            header[key] = value
    if isinstance(record.get("format"), int):
        header["format"] = record["format"]
    return header


def message_of(data: Any, note: Callable[[str], None] = lambda why: None) -> Message:
    """The message a line records. What cannot be read is a BadRecord (the line is
    skipped); tool calls and provider parts that could not be sent on are repaired or left
    out (agentcli.sessions.repairs), each said to `note`."""
    if not isinstance(data, dict):
        raise BadRecord("a message that is not an object")
    if data.get("role") not in ROLES:
        raise BadRecord(f"a message whose role is {data.get('role')!r}")
    for key in ("content", "id", "toolCallId", "error", "errorKind"):
        _text(data, key, "a message")
    if data.get("extra") is not None and not isinstance(data["extra"], dict):
        raise BadRecord("a message whose extra is not an object")
    if data["role"] == "tool" and not data.get("toolCallId"):
        raise BadRecord("a tool result without the id of its call")
    fixed = repaired(data, note)
    lost = data.get("toolCalls") and not fixed["toolCalls"]
    if data["role"] == "assistant" and lost and not data.get("content"):
        raise BadRecord("an assistant message whose tool calls cannot be sent on")
    return message_from_dict(fixed)


def compaction_of(record: dict[str, Any]) -> Compaction:
    summary, start = record.get("summary"), record.get("start", 0)
    if not isinstance(summary, str):
        raise BadRecord("a compaction whose summary is not text")
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise BadRecord("a compaction whose start is not a message number")
    return Compaction(summary, start)


def rewound_of(record: dict[str, Any]) -> Rewound:
    counts = [record.get("messages"), record.get("turns", 0)]
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in counts):
        raise BadRecord("a rewind whose messages or turns is not a count")
    return Rewound(*counts)


_EVENT_TEXT = {  # the fields the readers use, by event type
    "TEXT_MESSAGE_CONTENT": ("delta",),
    "TOOL_CALL_RESULT": ("toolCallId", "content"),
}


def event_of(record: dict[str, Any]) -> dict[str, Any]:
    event = record.get("e")
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise BadRecord("an event without a type")
    for key in _EVENT_TEXT.get(event["type"], ()):
        _text(event, key, f"a {event['type']} event", optional=False)
    if event["type"] == "CUSTOM" and event.get("name") == "usage":
        value = event.get("value")
        tokens = value.get("totalTokens", 0) if isinstance(value, dict) else None
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise BadRecord("a usage event whose totalTokens is not a count")
    return event


class Skipped:
    """The warnings of one file's read: the first few in full, then a count."""

    def __init__(self, path: Path | str, warnings: list[str]) -> None:
        self.path, self.warnings, self.count = path, warnings, 0

    def add(self, number: int, why: str) -> None:
        self.count += 1
        if self.count <= SHOWN_WARNINGS:
            self.warnings.append(f"{self.path}: skipped line {number} ({why})")

    def repaired(self, number: int, why: str) -> None:
        self.count += 1
        if self.count <= SHOWN_WARNINGS:
            self.warnings.append(f"{self.path}: line {number}: {why}")

    def done(self) -> None:
        if self.count > SHOWN_WARNINGS:
            more = self.count - SHOWN_WARNINGS
            self.warnings.append(f"{self.path}: {more} more damaged lines skipped or repaired")


def session_entries(
    path: Path,
    warnings: list[str],
    *,
    images: int | None = None,
    cursor: Cursor | None = None,
    records: Iterable[tuple[int, Any]] | None = None,
    label: str | None = None,
    image_loader: ImageLoader | None = None,
) -> Iterator[Entry]:
    """The usable lines of a session file, in order, checked; the others are warnings.
    A tool message stored with CONTENT_IN_EVENT gets its result event's content back.
    Messages keep their images' references (`stored_images`); only with `images` (the
    largest image to read: images.max_bytes) are the images read, to be sent on, and those
    that cannot be are one warning for the file (agentcli.sessions.images).
    With `cursor`, from where it points (agentcli.sessions.store.iter_lines).
    Raises SessionReadError when the file cannot be read at all.

    `records`: (number, record) from elsewhere than the file (a store's rows, numbered
    by seq), read through the same checks; `label` names them in warnings, and
    `image_loader` gives their images back."""
    skipped = Skipped(label or path, warnings)
    lost: list[str] = []  # why each image that could not be loaded was not
    results: dict[str, str] = {}  # result events' contents, until their messages come
    source = (
        iter_lines(path, skipped.add, cursor) if records is None else _objects(records, skipped)
    )
    for number, record in source:
        kind = record.get("t")
        try:
            if kind == "session":
                if number != 1:
                    raise BadRecord("a second session header")
                yield Entry("header", header_of(record))
            elif kind == "message":
                data = record.get("m")
                notes: list[str] = []
                message = message_of(data, notes.append)
                if notes:  # one warning for the line, only when it is kept
                    skipped.repaired(number, "; ".join(dict.fromkeys(notes)))
                if isinstance(data, dict) and data.get(CONTENT_IN_EVENT):
                    message.content = _stored_result(results, message)
                if isinstance(data, dict) and data.get("images"):
                    message.stored_images = _refs(label or path, number, data["images"], warnings)
                    if images is not None:
                        loaded, why = (
                            load_images(path, message.stored_images, images)
                            if image_loader is None
                            else image_loader(message.stored_images, images)
                        )
                        message.images = loaded
                        lost.extend(why)
                yield Entry("message", message)
            elif kind == "compaction":
                yield Entry("compaction", compaction_of(record))
            elif kind == "rewound":
                yield Entry("rewound", rewound_of(record))
            elif kind == "event":
                event = event_of(record)
                if event["type"] == "TOOL_CALL_RESULT" and not is_nested(event):
                    results[event["toolCallId"]] = event["content"]
                yield Entry("event", event)
            else:
                raise BadRecord(f"a record of kind {kind!r}")
        except BadRecord as bad:
            skipped.add(number, str(bad))
    skipped.done()
    if lost:
        kept = images_dir(path) if image_loader is None else "the store"
        warnings.append(lost_images(label or path, kept, lost))


def _objects(records: Iterable[tuple[int, Any]], skipped: Skipped) -> Iterator[tuple[int, Any]]:
    for number, record in records:
        if isinstance(record, dict):
            yield number, record
        else:
            skipped.add(number, "JSON, but not a record")


def _refs(where: Path | str, number: int, refs: Any, warnings: list[str]) -> list[dict[str, Any]]:
    """A damaged reference costs only the images: the message text still describes them."""
    problem = check_refs(refs)
    if problem is not None:
        warnings.append(f"{where}: line {number}: {problem}; its images are left out")
        return []
    return list(refs)


def lost_images(where: Path | str, kept: Path | str, lost: list[str]) -> str:
    """One warning for all the stored images of a session that cannot be sent on."""
    counts = Counter(lost)
    reasons = "; ".join(f"{n} {why}" for why, n in counts.items())
    return (
        f"{where}: {len(lost)} of its stored images cannot be sent on ({reasons}, in "
        f"{kept}); the model gets their descriptions"
    )


def _stored_result(results: dict[str, str], message: Message) -> str:
    content = results.pop(message.tool_call_id or "", None)
    if content is None:
        raise BadRecord("a tool result whose content was in an event that is not there")
    return content
