"""`agentcli sessions … --store URL`: the sessions a PostgreSQL store holds, read as the
session files are (their rows are the files' lines); and `sessions copy --to URL`, session
files moved into one, row for line (`seq` = the line's number, so copying again adds
only what a file gained since and rewrites nothing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcli.errors import UsageError
from agentcli.sessions.images import EXTENSIONS, images_dir, read_stored
from agentcli.sessions.listing import SessionSummary, summarise
from agentcli.sessions.postgres import PostgresStore, StoreConflict, record_text, store_url
from agentcli.sessions.rows import label, load_rows, local_path
from agentcli.sessions.session import Session
from agentcli.sessions.store import iter_lines


def open_store(url: str, where: str) -> PostgresStore:
    return PostgresStore(store_url(url, where))


def stored_summaries(store: PostgresStore, warnings: list[str]) -> list[SessionSummary]:
    """Every stored session's summary, the most recently written first."""
    summaries = []
    for thread_id in store.threads():
        rows = store.rows(thread_id)
        found = summarise(
            local_path(thread_id), warnings, records=rows, label=label(store, thread_id)
        )
        if found is not None:
            summaries.append(found)
    return summaries


def find_stored(store: PostgresStore, reference: str) -> tuple[Session, list[tuple[int, Any]]]:
    """A stored session by id or unique id prefix, and its rows."""
    threads = store.threads()
    matches = (
        [reference] if reference in threads else [t for t in threads if t.startswith(reference)]
    )
    if not reference or not matches:
        raise UsageError(f"no session {reference!r} in {store.name}")
    if len(matches) > 1:
        shown = ", ".join(sorted(matches)[:5])
        raise UsageError(f"{reference!r} matches several sessions ({shown}); give more of the id")
    session = load_rows(store, matches[0])
    if session is None:
        raise UsageError(f"no session {reference!r} in {store.name}")
    return session, store.rows(matches[0])


def copy_file(store: PostgresStore, path: Path, skipped: list[str]) -> tuple[int, int]:
    """One session file into the store: (its rows, how many were new). Raises
    StoreConflict when the store holds other records under its id."""
    rows, images = [], []
    for number, record in iter_lines(
        path, lambda n, why: skipped.append(f"{path.name}:{n}: {why}")
    ):
        rows.append((number, record_text(record)))
        images.extend(_images_of(path, record))
    before = store.last_seq(path.stem)
    store.put_images(images)
    store.append(path.stem, rows)
    return len(rows), sum(1 for seq, _ in rows if seq > before)


def _images_of(path: Path, record: dict[str, Any]) -> list[tuple[str, str, bytes]]:
    """The bytes of the images a message record names, from beside its file."""
    message = record.get("m") if record.get("t") == "message" else None
    refs = message.get("images") if isinstance(message, dict) else None
    found = []
    for ref in refs if isinstance(refs, list) else []:
        if not isinstance(ref, dict) or ref.get("mimeType") not in EXTENSIONS:
            continue
        name = f"{ref.get('sha256')}.{EXTENSIONS[ref['mimeType']]}"
        # Copied whatever images.max_bytes says now: the recorded size is the bound (the
        # file's own size is checked against it before a byte is read).
        size = ref.get("size")
        data = read_stored(images_dir(path) / name, size, size if isinstance(size, int) else 0)
        if isinstance(data, bytes):
            found.append((str(ref["sha256"]), ref["mimeType"], data))
    return found


__all__ = ["StoreConflict", "copy_file", "find_stored", "open_store", "stored_summaries"]
