"""A session recorded as rows of a PostgreSQL store (agentcli.sessions.postgres), as
SessionWriter records it as lines: the same records, in the same order, `seq` counting them.

`write` never waits on the database (it is called on the server's event loop): records
are queued and a thread of the writer's own inserts them in batches, in order. The first
batch the database refuses stops the writer: what follows is not written (a later row
without the ones before it would make another thread of it), and `failure` says why, for
the run to end with it."""

from __future__ import annotations

import base64
import hashlib
import threading
from pathlib import Path
from typing import Any

from agentcli.conversation.images import ImagePart, image_type
from agentcli.errors import AgentCliError
from agentcli.sessions.images import image_ref
from agentcli.sessions.postgres import PostgresStore, record_text
from agentcli.sessions.session import Session
from agentcli.sessions.shapes import session_entries
from agentcli.sessions.store import Cursor, sessions_dir

ROWS_FILE = (0, 0)  # a store's rows have no (device, inode): a cursor is a seq alone


class RowWriter:
    def __init__(self, store: PostgresStore, thread_id: str, last_seq: int) -> None:
        self.store, self.thread_id = store, thread_id
        self.seq = last_seq  # the last seq given to a record
        self.lines = 0  # records written by this writer (as SessionWriter counts lines)
        self.failure: AgentCliError | None = None
        self._rows: list[tuple[int, str]] = []
        self._images: list[tuple[str, str, bytes]] = []
        self._wake = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._loop, name="session-rows", daemon=True)
        self._thread.start()

    def write(self, record: dict[str, Any]) -> None:
        text = record_text(record)
        with self._wake:
            self.seq += 1
            self.lines += 1
            self._rows.append((self.seq, text))
            self._wake.notify()

    def store_images(self, images: list[ImagePart]) -> list[dict[str, Any]]:
        """References to the images, their bytes queued for the store (before the row
        that names them)."""
        refs = []
        with self._wake:
            for image in images:
                digest = image.digest()
                self._images.append((digest, image.mime_type, base64.b64decode(image.data)))
                refs.append(image_ref(image, digest))
        return refs

    def end(self) -> tuple[tuple[int, int], int]:
        return ROWS_FILE, self.seq

    def close(self) -> None:
        """No more records; the queued ones are still written (`finish` waits for them)."""
        with self._wake:
            self._closing = True
            self._wake.notify()

    def finish(self, timeout: float | None = None) -> AgentCliError | None:
        """Waits (in a worker thread) until every record is written or the writer failed."""
        self.close()
        self._thread.join(timeout)
        return self.failure

    def _loop(self) -> None:
        while True:
            with self._wake:
                while not (self._rows or self._images or self._closing):
                    self._wake.wait()
                rows, self._rows = self._rows, []
                images, self._images = self._images, []
                closing = self._closing
            if self.failure is None and (rows or images):
                try:
                    self.store.put_images(images)
                    self.store.append(self.thread_id, rows)
                except AgentCliError as error:
                    self.failure = error
            if closing and not self._rows and not self._images:
                return


def row_images(
    store: PostgresStore, refs: list[dict[str, Any]], max_bytes: int
) -> tuple[list[ImagePart], list[str]]:
    """The images references name, from the store, each checked against its recorded size
    and `max_bytes` before it is fetched and against its hash after (as
    agentcli.sessions.images checks a stored file); and why each other could not be had."""
    images, lost = [], []
    for ref in refs:
        size = ref.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            lost.append("no recorded size")
            continue
        if size > max_bytes:
            lost.append("over images.max_bytes")
            continue
        data = store.image(ref["sha256"])
        kind = image_type(data[:16]) if data is not None else None
        if data is None:
            lost.append("missing")
        elif kind is None or hashlib.sha256(data).hexdigest() != ref["sha256"]:
            lost.append("not the image its hash names")
        else:
            images.append(ImagePart.of_bytes(data, kind))
    return images, lost


def local_path(thread_id: str) -> Path:
    """Where a stored session's command outputs go on this machine (beside a file that is
    never written: the session itself is rows)."""
    return sessions_dir() / f"{thread_id}.jsonl"


def label(store: PostgresStore, thread_id: str) -> str:
    return f"{store.name} thread {thread_id}"


def load_rows(store: PostgresStore, thread_id: str, images: int | None = None) -> Session | None:
    """A stored session as recorded, to read or continue (None: no rows of it). Its
    images are fetched only with `images` (images.max_bytes): to send them on."""
    rows = store.rows(thread_id)
    if not rows:
        return None
    warnings: list[str] = []
    entries = session_entries(
        local_path(thread_id),
        warnings,
        images=images,
        records=rows,
        label=label(store, thread_id),
        image_loader=lambda refs, limit: row_images(store, refs, limit),
    )
    last = rows[-1][0]
    path = local_path(thread_id)
    session = Session.restored(path, entries, warnings, Cursor(ROWS_FILE, last, last))
    session.image_limit = images  # the rows catch_up_rows reads later are read as these
    return session


def catch_up_rows(store: PostgresStore, session: Session) -> None:
    """A kept session brought up to date with the rows other replicas wrote since."""
    known = session.read_to.offset
    rows = store.rows(session.id, known)
    if rows:
        session.restore(
            session_entries(
                session.path,
                session.warnings,
                images=session.image_limit,
                records=rows,
                label=label(store, session.id),
                image_loader=lambda refs, limit: row_images(store, refs, limit),
            )
        )
        session.read_to = Cursor(ROWS_FILE, rows[-1][0], rows[-1][0])
