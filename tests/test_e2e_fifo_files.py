"""Files someone else can write, replaced by what is not a file: a FIFO (which a plain
open would wait on for ever) or a directory where agentcli's configuration, a session or
the sessions' summary cache should be. Each is one clear line or skipped, never a hang."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer


def test_a_fifo_as_the_config_file_is_one_line_not_a_hang(run_cli: RunCli, cli_home: Path) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(config)
    result = run_cli(["run", "hi"], timeout=60)
    assert result.returncode == 2, result.stderr
    assert_one_error(result, f"cannot read {config}", "a FIFO, not a regular file")


def test_a_fifo_among_the_sessions_is_skipped_by_listings_and_named_by_a_resume(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(Reply.text(["ok"]))
    assert run_cli(["run", "hi"], server=server).returncode == 0
    sessions = cli_home / "agentcli" / "data" / "sessions"
    fifo = sessions / "20260101-000000-fifo.jsonl"
    os.mkfifo(fifo)
    (sessions / ".summaries.json").unlink(missing_ok=True)
    listed = run_cli(["sessions", "list"], timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert "Traceback" not in listed.stderr
    resumed = run_cli(["run", "--resume", fifo.stem, "again"], server=server, timeout=60)
    assert resumed.returncode != 0
    assert "a FIFO, not a regular file" in resumed.stderr, resumed.stderr
    assert "Traceback" not in resumed.stderr
