"""Sessions in PostgreSQL, for `agentcli serve` replicas that share their threads.

The mapping is the session file's, row for line: each record a JSONL line would hold (the
header included) is one row `events(thread_id, seq, record)`, appended and never rewritten,
`seq` counting from 1 as line numbers do; so a session restores from rows through the same
path as from its file (agentcli.sessions.shapes), and catching up is reading `seq > last`.
`record` is `json`, not `jsonb`: jsonb cannot hold a `\\u0000` a tool's output may have, and
json keeps the exact text (compared on a retried append). Images' bytes are rows of
`images`, content-addressed by sha256 as they are on disk: a thread's images follow it to
every replica.

A run's claim on a thread is a row of `leases` with an expiry its owner renews; a replica
killed mid-run stops renewing, and its claim lapses. Everything here is synchronous
(psycopg 3, through libpq) and meant for worker threads: the server never waits on the
database on its event loop."""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from collections.abc import Iterator
from typing import Any

from agentcli.errors import AgentCliError, UsageError

CONNECT_SECONDS = 5  # libpq's connect_timeout: an unreachable database is said, not waited on
IDLE_CONNECTIONS = 4  # kept open between operations, per process
# Any fixed number, the same in every replica: the migrations' advisory lock.
MIGRATION_LOCK = 4_300_043

MIGRATIONS: tuple[str, ...] = (
    # 1: rows of the session records, claims on running threads, images by hash.
    """
    CREATE TABLE events (
        thread_id text NOT NULL,
        seq bigint NOT NULL,
        record json NOT NULL,
        written timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (thread_id, seq)
    );
    CREATE TABLE leases (
        thread_id text PRIMARY KEY,
        owner text NOT NULL,
        expires_at timestamptz NOT NULL
    );
    CREATE TABLE images (
        sha256 text PRIMARY KEY,
        mime_type text NOT NULL,
        data bytea NOT NULL
    );
    """,
)


class StoreUnavailable(AgentCliError):
    """The database cannot be reached or answered with an error: one line says which."""

    code = "store_unavailable"


class StoreConflict(AgentCliError):
    """Another writer recorded this thread's next rows first (its claim had lapsed)."""

    code = "store_conflict"


def store_url(value: str, where: str) -> str:
    """A PostgreSQL URL as given (`--store`, `serve.store`), checked: a password in it is
    refused, since a command line shows in `ps` and a configuration file gets shared;
    libpq reads it from PGPASSWORD or ~/.pgpass instead."""
    if not value.startswith(("postgresql://", "postgres://")):
        raise UsageError(f"{where} must be a postgresql:// URL, not {value!r}")
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        from agentcli.install_source import extra_install_command

        raise UsageError(
            f"{where}: PostgreSQL needs the postgresql extra: "
            + extra_install_command("serve,postgresql")
        ) from None
    try:
        parts = conninfo_to_dict(value)
    except Exception as error:  # psycopg.ProgrammingError: a URL libpq cannot read
        raise UsageError(f"{where}: not a URL libpq can read ({_first_line(error)})") from None
    if parts.get("password"):
        raise UsageError(
            f"{where}: the URL holds a password, which `ps` and shared files would show; "
            "remove it and set PGPASSWORD (or ~/.pgpass) instead"
        )
    return value


def shown_url(dsn: str) -> str:
    """The URL as said in messages: user, host, port and database, nothing else."""
    from psycopg.conninfo import conninfo_to_dict

    parts = conninfo_to_dict(dsn)
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host', '')}{port}/{parts.get('dbname', '')}"


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


class PostgresStore:
    """Sessions' rows in one database, through a few connections kept open (thread-safe:
    each operation takes one, and gives it back unless it broke)."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.name = shown_url(dsn)
        self._idle: queue.LifoQueue[Any] = queue.LifoQueue()
        self._migrated = False
        self._lock = threading.Lock()

    # --- connections

    def _connect(self) -> Any:
        import psycopg

        try:
            return psycopg.connect(self.dsn, connect_timeout=CONNECT_SECONDS, autocommit=True)
        except psycopg.Error as error:
            raise self.unavailable(error) from None

    def unavailable(self, error: BaseException) -> StoreUnavailable:
        return StoreUnavailable(
            f"the thread store {self.name} is unavailable: {_first_line(error)}"
        )

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        """A connection for one operation. A kept connection the server dropped meanwhile
        (a restart) fails at its first use: the operation is tried once more on a new one
        (every operation here can be: appends check what is already there)."""
        import psycopg

        try:
            connection = self._idle.get_nowait()
        except queue.Empty:
            connection = self._connect()
        try:
            yield connection
        except psycopg.Error:
            connection.close()
            raise
        except BaseException:
            connection.close()
            raise
        if self._idle.qsize() < IDLE_CONNECTIONS and not connection.closed:
            self._idle.put(connection)
        else:
            connection.close()

    def _run(self, operation: Any) -> Any:
        """`operation(connection)`, on a kept connection and, when that one turns out to be
        broken, once more on a new one; a database that still fails is StoreUnavailable."""
        import psycopg

        fresh = self._idle.empty()
        for attempt in (1, 2):
            try:
                with self._connection() as connection:
                    return operation(connection)
            except (psycopg.OperationalError, psycopg.InterfaceError) as error:
                if fresh or attempt == 2:
                    raise self.unavailable(error) from None
                fresh = True
            except psycopg.Error as error:
                raise self.unavailable(error) from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        while not self._idle.empty():
            with contextlib.suppress(Exception):
                self._idle.get_nowait().close()

    # --- the schema

    def migrate(self) -> None:
        """The schema brought to this version's, once per process. Under an advisory lock,
        in one transaction: replicas starting at once apply each migration once."""
        with self._lock:
            if self._migrated:
                return
            self._run(_migrate)
            self._migrated = True

    def ping(self) -> None:
        self._run(lambda connection: connection.execute("SELECT 1").fetchone())

    # --- rows

    def rows(self, thread_id: str, after: int = 0) -> list[tuple[int, dict[str, Any]]]:
        """The thread's records after `seq` `after`, in order: (seq, record)."""
        self.migrate()

        def read(connection: Any) -> list[tuple[int, Any]]:
            cursor = connection.execute(
                "SELECT seq, record::text FROM events WHERE thread_id = %s AND seq > %s "
                "ORDER BY seq",
                (thread_id, after),
            )
            return [(seq, _record(text)) for seq, text in cursor]

        return self._run(read)

    def append(self, thread_id: str, rows: list[tuple[int, str]]) -> None:
        """Rows (seq, the record's JSON text), in one transaction. A row already there with
        the same text is this writer's own (a retried commit); one with other text is
        another writer's: StoreConflict, and nothing of this batch is written."""
        if not rows:
            return
        self.migrate()
        self._run(lambda connection: _append(connection, thread_id, rows))

    def put_images(self, images: list[tuple[str, str, bytes]]) -> None:
        """Images (sha256, mime type, bytes): each stored once."""
        if not images:
            return
        self.migrate()

        def put(connection: Any) -> None:
            with connection.transaction(), connection.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO images (sha256, mime_type, data) VALUES (%s, %s, %s) "
                    "ON CONFLICT (sha256) DO NOTHING",
                    images,
                )

        self._run(put)

    def image(self, sha256: str) -> bytes | None:
        self.migrate()

        def read(connection: Any) -> bytes | None:
            row = connection.execute(
                "SELECT data FROM images WHERE sha256 = %s", (sha256,)
            ).fetchone()
            return bytes(row[0]) if row else None

        return self._run(read)

    def threads(self) -> list[str]:
        """Every thread's id, the most recently written first."""
        self.migrate()

        def read(connection: Any) -> list[str]:
            cursor = connection.execute(
                "SELECT thread_id FROM events GROUP BY thread_id "
                "ORDER BY max(written) DESC, thread_id DESC"
            )
            return [row[0] for row in cursor]

        return self._run(read)

    def last_seq(self, thread_id: str) -> int:
        self.migrate()

        def read(connection: Any) -> int:
            row = connection.execute(
                "SELECT coalesce(max(seq), 0) FROM events WHERE thread_id = %s", (thread_id,)
            ).fetchone()
            return int(row[0])

        return self._run(read)

    # --- leases: one run at a time per thread, across replicas

    def take_lease(self, thread_id: str, owner: str, seconds: float) -> bool:
        """The thread claimed for `seconds` by `owner`, unless another owner's claim has
        not lapsed yet."""
        self.migrate()

        def take(connection: Any) -> bool:
            row = connection.execute(
                "INSERT INTO leases (thread_id, owner, expires_at) "
                "VALUES (%s, %s, now() + make_interval(secs => %s)) "
                "ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner, "
                "expires_at = excluded.expires_at "
                "WHERE leases.expires_at < now() OR leases.owner = excluded.owner "
                "RETURNING owner",
                (thread_id, owner, seconds),
            ).fetchone()
            return row is not None

        return self._run(take)

    def renew_lease(self, thread_id: str, owner: str, seconds: float) -> bool:
        """False when the claim is no longer this owner's (it lapsed, another took it)."""

        def renew(connection: Any) -> bool:
            row = connection.execute(
                "UPDATE leases SET expires_at = now() + make_interval(secs => %s) "
                "WHERE thread_id = %s AND owner = %s RETURNING owner",
                (seconds, thread_id, owner),
            ).fetchone()
            return row is not None

        return self._run(renew)

    def release_lease(self, thread_id: str, owner: str) -> None:
        self._run(
            lambda connection: connection.execute(
                "DELETE FROM leases WHERE thread_id = %s AND owner = %s", (thread_id, owner)
            )
        )


def _migrate(connection: Any) -> None:
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)")
        row = connection.execute("SELECT max(version) FROM schema_version").fetchone()
        version = row[0] or 0
        if version > len(MIGRATIONS):
            raise StoreUnavailable(
                f"the thread store's schema is version {version}, newer than this agentcli's "
                f"({len(MIGRATIONS)}); upgrade agentcli"
            )
        for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
            connection.execute(migration)
            connection.execute("INSERT INTO schema_version (version) VALUES (%s)", (number,))


def _append(connection: Any, thread_id: str, rows: list[tuple[int, str]]) -> None:
    with connection.transaction(), connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO events (thread_id, seq, record) VALUES (%s, %s, %s::json) "
            "ON CONFLICT (thread_id, seq) DO NOTHING",
            [(thread_id, seq, text) for seq, text in rows],
        )
        theirs = cursor.execute(
            "SELECT seq, record::text FROM events WHERE thread_id = %s AND seq = ANY(%s)",
            (thread_id, [seq for seq, _ in rows]),
        ).fetchall()
        ours = dict(rows)
        if any(ours[seq] != text for seq, text in theirs):
            raise StoreConflict(
                f"thread {thread_id}: another replica recorded its next events first "
                "(this run's claim had lapsed); its run is not saved"
            )


def _record(text: str) -> Any:
    from agentcli.text.decoding import loads

    try:
        return loads(text)
    except ValueError:
        return None  # cannot happen for json rows; skipped by the reader like a bad line


def record_text(record: dict[str, Any]) -> str:
    """A record as its row's JSON text: the line the file would hold, without its newline."""
    from agentcli.sessions.store import record_line

    return record_line(record).decode("utf-8").rstrip("\n")


__all__ = ["PostgresStore", "StoreConflict", "StoreUnavailable", "json", "record_text", "store_url"]
