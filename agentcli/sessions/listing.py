"""What `agentcli sessions` shows: one line per session, readable transcripts, exports."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from agentcli.conversation.messages import Message, message_to_dict
from agentcli.records import asdict, dataclass
from agentcli.sessions.images import describe_ref, image_ref
from agentcli.sessions.session import Session
from agentcli.sessions.shapes import session_entries
from agentcli.sessions.store import SessionReadError, sessions_dir, unreadable


@dataclass(slots=True)
class SessionSummary:
    id: str
    started: str
    workspace: str
    model: str
    first_prompt: str
    turns: int
    tokens: int


def summarise(
    path: Path,
    warnings: list[str] | None = None,
    *,
    records: list[tuple[int, Any]] | None = None,
    label: str | None = None,
) -> SessionSummary | None:
    """The file's summary (None: nothing in it is a session's); lines that cannot be used
    are skipped, said in `warnings`. Raises SessionReadError when it cannot be read.
    `records`: a store's rows instead of the file (agentcli.sessions.stored)."""
    header: dict[str, Any] = {}
    first, turns, tokens, usable = "", 0, 0, False
    said = [] if warnings is None else warnings
    for entry in session_entries(path, said, records=records, label=label):
        usable = True
        if entry.kind == "header":
            header = entry.value
        elif entry.kind == "message" and entry.value.role == "user":
            turns += 1
            first = first or entry.value.content
        elif entry.kind == "rewound":
            turns = entry.value.turns
            first = first if turns else ""
        elif entry.kind == "event":
            event = entry.value
            metadata = event.get("metadata")
            theirs = isinstance(metadata, dict) and "relayedFrom" in metadata  # a remote's
            if event["type"] == "CUSTOM" and event.get("name") == "usage" and not theirs:
                tokens += event["value"].get("totalTokens", 0)
    if not usable:
        return None
    return SessionSummary(
        id=header.get("id", path.stem),
        started=header.get("created", ""),
        workspace=header.get("workspace", ""),
        model=header.get("model", ""),
        first_prompt=" ".join(first.split())[:200],
        turns=turns,
        tokens=tokens,
    )


# One line per session file, kept beside them: (size, mtime) → its summary, so that
# listing hundreds of sessions reads only the files that changed since the last listing.
SUMMARY_CACHE = "summaries.json"
_CACHE_VERSION = 2  # 2: each entry keeps the file's warnings


def all_summaries(warnings: list[str] | None = None) -> list[SessionSummary]:
    """Every session's summary, by id, the latest first. A file that cannot be read, or
    lines in one that cannot be used, are said in `warnings` (kept in the cache, so they
    are said every time); a sessions directory that cannot be read is SessionReadError."""
    directory = sessions_dir()
    warnings = [] if warnings is None else warnings
    try:
        paths = sorted(
            (Path(e.path) for e in os.scandir(directory) if e.name.endswith(".jsonl")),
            reverse=True,
        )
    except FileNotFoundError:
        return []
    except OSError as error:
        raise unreadable(directory, error) from None
    cache = _read_cache(directory / SUMMARY_CACHE)
    fresh: dict[str, Any] = {}
    summaries = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            continue  # removed meanwhile
        key = [stat.st_size, stat.st_mtime_ns]
        hit, summary, said = _cached(cache.get(path.name), key)
        if not hit:
            said = []
            try:
                summary = summarise(path, said)
            except SessionReadError as error:  # left out, said, the listing goes on
                warnings.append(f"{error}; left out of the list")
                continue
        warnings.extend(said)
        fresh[path.name] = {
            "key": key,
            "summary": asdict(summary) if summary else None,
            "warnings": said,
        }
        if summary is not None:
            summaries.append(summary)
    if fresh != cache:
        _write_cache(directory / SUMMARY_CACHE, fresh)
    return summaries


def _read_cache(path: Path) -> dict[str, Any]:
    try:
        from agentcli.regular_files import read_text

        data = json.loads(read_text(path))
    except (OSError, ValueError):
        return {}  # none yet, or damaged: rebuilt from the files
    if not isinstance(data, dict) or data.get("version") != _CACHE_VERSION:
        return {}
    entries = data.get("sessions")
    return entries if isinstance(entries, dict) else {}


_SUMMARY_TYPES = {
    "id": str,
    "started": str,
    "workspace": str,
    "model": str,
    "first_prompt": str,
    "turns": int,
    "tokens": int,
}


def _cached(entry: Any, key: list[int]) -> tuple[bool, SessionSummary | None, list[str]]:
    """(True, summary, warnings) when the cache holds a usable summary of the file as it
    is now (None: the file is not a session); (False, None, []) when it must be read."""
    miss: tuple[bool, SessionSummary | None, list[str]] = (False, None, [])
    if not isinstance(entry, dict) or entry.get("key") != key:
        return miss
    said = entry.get("warnings", [])
    if not isinstance(said, list) or not all(isinstance(w, str) for w in said):
        return miss
    value = entry.get("summary", False)
    if value is None:
        return True, None, said
    if isinstance(value, dict) and {k: type(v) for k, v in value.items()} == _SUMMARY_TYPES:
        return True, SessionSummary(**value), said
    return miss


def _write_cache(path: Path, entries: dict[str, Any]) -> None:
    """Atomically, and best effort: a listing never fails for want of its cache."""
    text = json.dumps({"version": _CACHE_VERSION, "sessions": entries}, ensure_ascii=False)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):  # a read-only directory refuses this too
            temporary.unlink(missing_ok=True)


def summaries_json(summaries: list[SessionSummary]) -> str:
    from agentcli.output.visible import visible_json

    return visible_json([asdict(s) for s in summaries], indent=2)


def summaries_table(summaries: list[SessionSummary]) -> str:
    if not summaries:
        return "no sessions yet\n"
    from agentcli.output.visible import one_line

    width = max(len("model"), *(len(one_line(s.model)) for s in summaries))
    lines = [
        f"{'id':<23} {'started':<19} {'turns':>5} {'tokens':>8}  {'model':<{width}}  "
        "workspace · first prompt"
    ]
    for s in summaries:
        first = one_line(s.first_prompt)  # a prompt may have come from a piped file
        prompt = first if len(first) <= 60 else first[:59] + "…"
        lines.append(
            f"{one_line(s.id):<23} {one_line(s.started[:19]):<19} {s.turns:>5} {s.tokens:>8}  "
            f"{one_line(s.model):<{width}}  {one_line(s.workspace)} · {prompt}"
        )
    return "\n".join(lines) + "\n"


def _fence(text: str) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}\n{text}\n{ticks}"


def transcript_markdown(session: Session) -> str:
    from agentcli.output.visible import one_line

    header = session.header
    out = [
        f"# Session {one_line(session.id)}",
        "",
        f"- started: {one_line(header.get('created', '?'))}",
        f"- workspace: {one_line(header.get('workspace', '?'))}",
        f"- model: {one_line(header.get('model', '?'))}",
        "",
    ]
    if session.conversation.summary:
        out += ["## Summary of the compacted part", "", session.conversation.summary, ""]
    forwarded = sorted(session.forwarded_props, key=lambda item: item[0])
    messages = session.conversation.messages
    for position, message in enumerate([*messages, None]):
        while forwarded and forwarded[0][0] <= position:
            out += _forwarded(forwarded.pop(0)[1])
        if message is None:
            break
        if message.role == "user":
            out += ["## User", "", message.content, ""]
            out += _images(message)
        elif message.role == "assistant":
            out += ["## Assistant", ""]
            if message.content:
                out += [message.content, ""]
            for call in message.tool_calls:
                out += [f"**→ {one_line(call.name)}** `{one_line(call.arguments)}`", ""]
        elif message.role == "tool":
            label = "✗ error" if message.error else "result"
            out += [f"*{label}:*", "", _fence(message.content), ""]
            out += _images(message)
    return "\n".join(out)


def _images(message: Message) -> list[str]:
    """A message's stored images, by what its record says of each: no image file is read."""
    if not message.stored_images:
        return []
    return [f"- stored image: {describe_ref(ref)}" for ref in message.stored_images] + [""]


def _forwarded(value: Any) -> list[str]:
    """A client's forwardedProps, as JSON (any control character in it shown, not obeyed)."""
    from agentcli.output.visible import visible

    text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    return [
        "*forwardedProps (the client's, given to the model as context):*",
        "",
        _fence(visible(text)),
        "",
    ]


def _exported(message: Message) -> dict[str, Any]:
    """A message as the session file has it: its images named, their bytes left out."""
    data = message_to_dict(message)
    refs = message.stored_images or [image_ref(image) for image in message.images]
    if refs:
        data["images"] = refs
    return data


def export_json(session: Session, records: list[tuple[int, Any]] | None = None) -> str:
    document: dict[str, Any] = {
        "session": session.header,
        "summary": session.conversation.summary,
        "messages": [_exported(m) for m in session.conversation.messages],
        "events": [
            e.value for e in session_entries(session.path, [], records=records) if e.kind == "event"
        ],
    }
    from agentcli.output.visible import visible_json

    return visible_json(document, indent=2)


@dataclass(slots=True)
class RecentSession:
    summary: SessionSummary
    modified: float  # seconds since the epoch: the file's last write


def recent_sessions(limit: int = 50, *, exclude: str | None = None) -> list[RecentSession]:
    """For the REPL's `/resume` picker: the sessions with at least one turn, the latest
    written first, `exclude` (the current one) left out."""
    directory = sessions_dir()
    found = []
    for summary in all_summaries():
        if summary.turns == 0 or summary.id == exclude:
            continue
        try:
            stat = (directory / f"{summary.id}.jsonl").stat()
        except OSError:
            continue
        found.append((stat.st_mtime_ns, summary.id, summary))
    found.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [RecentSession(summary, ns / 1e9) for ns, _, summary in found[:limit]]


def age(seconds: float) -> str:
    """`just now`, `5m ago`, `3h ago`, `2d ago`."""
    seconds = max(seconds, 0)
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"
