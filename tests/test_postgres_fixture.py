"""The test PostgreSQL server itself: both ways in (password by PGPASSWORD, trust), restart."""

from __future__ import annotations

import psycopg
import pytest

from tests.postgres import PostgresServer


def test_password_role_needs_pgpassword(postgres: PostgresServer, postgres_dsn: str) -> None:
    with psycopg.connect(postgres_dsn, password=postgres.password) as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("agentcli",)
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(postgres_dsn, password="wrong").close()


def test_trust_and_restart(postgres: PostgresServer, postgres_dsn: str) -> None:
    db = postgres_dsn.rsplit("/", 1)[1]
    with psycopg.connect(postgres.trust_dsn(db)) as conn:
        conn.execute("CREATE TABLE kept (n int)")
        conn.execute("INSERT INTO kept VALUES (7)")
    postgres.restart()
    with psycopg.connect(postgres.trust_dsn(db)) as conn:
        assert conn.execute("SELECT n FROM kept").fetchone() == (7,)
