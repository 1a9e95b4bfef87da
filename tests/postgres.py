"""A real PostgreSQL server for the tests: initdb / pg_ctl in a temporary directory.

Stable API (another branch reuses it):
    find_bindir() -> Path | None         initdb / pg_ctl: PATH, then Debian's dirs
    PostgresServer                       one cluster: start(), stop(), restart(), create_database(),
                                         dsn(db), trust_dsn(db), env(), password, port, sockdir
    fixture `postgres`     (session)     a started PostgresServer, or a clean skip with the reason
    fixture `postgres_dsn` (function)    a fresh database per test: its DSN (no password);
                                         pass `postgres.env()` to a child: PGPASSWORD for libpq

Two roles: `postgres` (superuser, trust over loopback and the socket) and `agentcli`
(scram-sha-256 password over TCP, the password given by PGPASSWORD) so both ways are exercised.
As root, the server runs as the `postgres` system user (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROLE = "agentcli"


def find_bindir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    # Debian keeps them out of PATH, one directory per major version: take the newest.
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name or 0)
    )
    for directory in reversed(candidates):
        if (Path(directory) / "pg_ctl").exists() and (Path(directory) / "initdb").exists():
            return Path(directory)
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    def __init__(self, bindir: Path, root: Path) -> None:
        self.bindir = bindir
        self.root = root
        self.data = root / "data"
        self.sockdir = root / "sock"
        self.log = root / "server.log"
        self.host = "127.0.0.1"
        self.port = _free_port()
        self.password = uuid.uuid4().hex
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            self._as_user = ["runuser", "-u", "postgres", "--"]

    # --- lifecycle -------------------------------------------------------------------------
    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self._as_user, *argv], capture_output=True, text=True, timeout=120, check=False
        )

    def init(self) -> None:
        self.sockdir.mkdir(parents=True, exist_ok=True)
        if self._as_user:
            shutil.chown(self.root, "postgres")
            shutil.chown(self.sockdir, "postgres")
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self._as_user:
            shutil.chown(pwfile, "postgres")
        done = self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--no-sync",
        )
        pwfile.unlink()
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr.strip()[-400:]}")
        hba = self.data / "pg_hba.conf"
        hba.write_text(
            "local all all trust\n"
            "host all postgres 127.0.0.1/32 trust\n"
            "host all all 127.0.0.1/32 scram-sha-256\n"
        )
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"listen_addresses = '{self.host}'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.sockdir}'\n"
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                "max_connections = 200\n"
            )

    def start(self) -> None:
        done = self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-w",
            "-t",
            "60",
            "start",
        )
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()[-400:]}")

    def stop(self) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    # --- databases -------------------------------------------------------------------------
    def admin(self, sql: str, db: str = "postgres") -> str:
        """Run SQL as the superuser over the socket (psql), return its plain output."""
        done = self._run(
            str(self.bindir / "psql") if (self.bindir / "psql").exists() else "psql",
            "-h",
            str(self.sockdir),
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-d",
            db,
            "-v",
            "ON_ERROR_STOP=1",
            "-At",
            "-c",
            sql,
        )
        if done.returncode != 0:
            raise RuntimeError(f"psql failed: {done.stderr.strip()[-400:]}")
        return done.stdout.strip()

    def create_role(self) -> None:
        self.admin(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{self.password}'")

    def create_database(self, name: str | None = None) -> str:
        name = name or "t_" + uuid.uuid4().hex[:12]
        self.admin(f"CREATE DATABASE {name} OWNER {ROLE}")
        return self.dsn(name)

    def dsn(self, db: str) -> str:
        """The password role over TCP; the password goes by PGPASSWORD (see env())."""
        return f"postgresql://{ROLE}@{self.host}:{self.port}/{db}"

    def trust_dsn(self, db: str) -> str:
        """The superuser over TCP with trust auth: no password at all."""
        return f"postgresql://postgres@{self.host}:{self.port}/{db}"

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ if base is None else base)
        env["PGPASSWORD"] = self.password
        return env


def _skip_reason() -> str | None:
    if find_bindir() is None:
        return "PostgreSQL (initdb/pg_ctl) is not installed"
    if os.geteuid() == 0 and not shutil.which("runuser"):
        return "running as root without runuser to drop to the postgres user"
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and no `postgres` system user to run the server"
    return None


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    bindir = find_bindir()
    assert bindir is not None
    # Not under pytest's tmp dir: that is 0700 root-owned and the postgres user must enter it.
    root = Path(tempfile.mkdtemp(prefix="agentcli-pg-"))
    os.chmod(root, 0o755)
    server = PostgresServer(bindir, root)
    try:
        server.init()
        server.start()
        server.create_role()
    except Exception:
        log = server.log.read_text()[-800:] if server.log.exists() else ""
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"could not start PostgreSQL; log tail:\n{log}") from None
    yield server
    server.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_dsn(postgres: PostgresServer) -> str:
    return postgres.create_database()
