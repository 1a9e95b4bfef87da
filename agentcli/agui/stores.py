"""Where `agentcli serve` keeps its threads, behind one interface (ThreadStore):

- FileThreads: the JSONL sessions directory, for one process (the default; a run claims
  its thread in this process's memory, and the file's lock keeps other processes off it).
- PostgresThreads: a PostgreSQL database that several replicas share. A run claims its
  thread with a lease row that it renews while it runs; a run on a thread another replica
  holds is a 409, as on one replica. A replica killed mid-run stops renewing: its lease
  lapses and any replica continues the thread, the partial answer marked interrupted.

A claim gives the run its session, brought up to date (kept in memory between runs; only
what others recorded since is read, off the event loop); `release` ends the claim and says
what went wrong with the store during the run, if anything, for the run to end with."""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from agentcli.agui.snapshot import SnapshotWire
from agentcli.agui.threads import KeptThreads, session_id_for
from agentcli.errors import AgentCliError
from agentcli.http_guard import Rejected
from agentcli.records import dataclass
from agentcli.sessions.session import Session


def busy(thread_id: str) -> Rejected:
    return Rejected(409, f"thread {thread_id!r} has a run in progress; wait for it")


class StoreFailed(Exception):
    """The store cannot give the run its thread: the run ends with this one line."""


@dataclass(slots=True)
class Claim:
    thread_id: str
    session: Session
    owner: str = ""
    renewer: asyncio.Task[None] | None = None
    problem: str | None = None  # what went wrong with the store during the run
    on_problem: Callable[[], None] = lambda: None  # the run is to stop: set by the server
    writer: Any = None  # a store's RowWriter, waited for at the end


class ThreadStore(Protocol):
    async def start(self) -> None: ...
    async def claim(
        self, thread_id: str, workspace: Path, model: str, image_limit: int
    ) -> Claim: ...
    async def release(self, claim: Claim, *, clean: bool) -> str | None: ...
    async def health(self) -> str | None: ...
    async def aclose(self) -> None: ...
    def snapshots(self, thread_id: str) -> SnapshotWire: ...


class FileThreads:
    """The JSONL sessions directory: today's behaviour, unchanged."""

    def __init__(self) -> None:
        self.busy: set[str] = set()
        self.threads = KeptThreads()

    async def start(self) -> None:
        return None

    async def claim(self, thread_id: str, workspace: Path, model: str, image_limit: int) -> Claim:
        """The thread for one run; `image_limit` (images.max_bytes): its stored images
        within it are read, to be sent on."""
        if thread_id in self.busy:
            raise busy(thread_id)
        self.busy.add(thread_id)
        kept = self.threads.take(thread_id)
        try:  # in a worker thread: a thread's file, however large, never holds up the loop
            session = await asyncio.to_thread(
                self.threads.open, thread_id, kept, workspace, model, image_limit
            )
        except AgentCliError as error:
            self.busy.discard(thread_id)
            raise Rejected(409, f"thread {thread_id!r}: {error}") from None
        except BaseException:
            self.busy.discard(thread_id)  # the thread stays usable, whatever went wrong
            raise
        return Claim(thread_id, session)

    async def release(self, claim: Claim, *, clean: bool) -> str | None:
        self._done(claim, clean=clean)
        return None

    def snapshots(self, thread_id: str) -> SnapshotWire:
        """The thread's messages as encoded for MESSAGES_SNAPSHOT, kept as its session is."""
        return self.threads.wire(thread_id)

    def _done(self, claim: Claim, *, clean: bool) -> None:
        """The thread is free; its session is kept for its next run when the run ended
        cleanly (what it holds is then what the store holds)."""
        if clean and claim.session.unsaved is None and claim.problem is None:
            self.threads.keep(claim.thread_id, claim.session)
        else:
            self.threads.drop(claim.thread_id)
        self.busy.discard(claim.thread_id)

    async def health(self) -> str | None:
        return None

    async def aclose(self) -> None:
        return None


class PostgresThreads(FileThreads):
    """Threads in a PostgreSQL database that replicas share (agentcli.sessions.postgres)."""

    def __init__(self, dsn: str, lease_seconds: float) -> None:
        from agentcli.sessions.postgres import PostgresStore

        super().__init__()
        self.store = PostgresStore(dsn)
        self.lease_seconds = float(lease_seconds)
        # Which replica and which run holds a lease: for the database's rows, and people.
        self.replica = f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    async def start(self) -> None:
        """Migrations, on start: a database that is not there yet is said, and the server
        starts anyway (its runs fail with that line until the database is back)."""
        import sys

        try:
            await asyncio.to_thread(self.store.migrate)
        except AgentCliError as error:
            sys.stderr.write(f"agentcli: warning: {error}; runs fail until it is back\n")
            sys.stderr.flush()

    async def claim(self, thread_id: str, workspace: Path, model: str, image_limit: int) -> Claim:
        if thread_id in self.busy:
            raise busy(thread_id)
        self.busy.add(thread_id)
        owner = f"{self.replica}:{uuid.uuid4().hex[:8]}"
        try:
            kept = self.threads.take(thread_id)
            session = await asyncio.to_thread(
                self._open, thread_id, owner, kept, workspace, model, image_limit
            )
        except BaseException:
            self.busy.discard(thread_id)
            raise
        claim = Claim(thread_id, session, owner, writer=session.writer)
        claim.renewer = asyncio.create_task(self._renew(claim))
        return claim

    def _open(
        self,
        thread_id: str,
        owner: str,
        kept: Session | None,
        workspace: Path,
        model: str,
        image_limit: int,
    ) -> Session:
        """(A worker thread.) The lease, then the thread's rows: kept ones caught up, or
        all read, or a new thread's header."""
        from agentcli.sessions.rows import RowWriter, catch_up_rows, load_rows

        store, session_id = self.store, session_id_for(thread_id)
        try:
            if not store.take_lease(session_id, owner, self.lease_seconds):
                raise busy(thread_id)
            try:
                if kept is not None and kept.writer is None:
                    catch_up_rows(store, kept)
                    session = kept
                else:
                    session = load_rows(store, session_id, image_limit)  # type: ignore[assignment]
                if session is None:
                    session = Session.create(
                        workspace, model, session_id, writer=lambda: RowWriter(store, session_id, 0)
                    )
                    session.image_limit = image_limit  # for the rows other replicas add
                    return session
                last = session.read_to.offset
                session.continue_writing(lambda: RowWriter(store, session_id, last))
                return session
            except BaseException:
                with contextlib.suppress(AgentCliError):
                    store.release_lease(session_id, owner)
                raise
        except AgentCliError as error:
            raise StoreFailed(str(error)) from None

    async def _renew(self, claim: Claim) -> None:
        """Every third of the lease while the run goes on; a renewal the database refuses
        (down, or the lease lapsed and another replica took it) stops the run."""
        session_id = claim.session.id
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            problem = self._writer_failure(claim)
            if problem is None:
                try:
                    kept = await asyncio.to_thread(
                        self.store.renew_lease, session_id, claim.owner, self.lease_seconds
                    )
                except AgentCliError as error:
                    problem = str(error)
                else:
                    if not kept:
                        problem = (
                            f"thread {claim.thread_id!r}: this replica's claim on it lapsed "
                            "(the database was out of reach too long); the run is stopped"
                        )
            if problem is not None:
                claim.problem = claim.problem or problem
                claim.on_problem()
                return

    @staticmethod
    def _writer_failure(claim: Claim) -> str | None:
        failure = getattr(claim.session.writer, "failure", None)
        return None if failure is None else str(failure)

    async def release(self, claim: Claim, *, clean: bool) -> str | None:
        """(After the session was closed.) Its rows all written, the lease given back."""
        if claim.renewer is not None:
            claim.renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await claim.renewer
        writer = claim.writer
        problem = claim.problem
        if writer is not None:
            failure = await asyncio.to_thread(writer.finish)
            problem = problem or (None if failure is None else str(failure))
        try:
            await asyncio.to_thread(self.store.release_lease, claim.session.id, claim.owner)
        except AgentCliError as error:  # it lapses by itself
            problem = problem or str(error)
        claim.problem = problem
        self._done(claim, clean=clean)
        return problem

    async def health(self) -> str | None:
        try:
            await asyncio.to_thread(self.store.ping)
        except AgentCliError as error:
            return str(error)
        return None

    async def aclose(self) -> None:
        await asyncio.to_thread(self.store.close)


def thread_store(store: str | None, lease_seconds: float) -> ThreadStore:
    if store is None:
        return FileThreads()
    return PostgresThreads(store, lease_seconds)
