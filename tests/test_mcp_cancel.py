"""Cancellation reaches the server every time: an MCP call still running when `--timeout`
passes, or when Ctrl-C (SIGINT) comes, is cancelled with notifications/cancelled carrying
its request id, and the server sees it before agentcli stops it. The SDK-written
tests/fixtures/mcp/notes_server.py writes `cancelled ID` when its `hang` call is cancelled.
Repeated: a race lost now and then is what this guards against."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import RunCli, StartCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_mcp import toml_str, write_config

pytest.importorskip("mcp")
NOTES_SERVER = Path(__file__).parent / "fixtures" / "mcp" / "notes_server.py"
TRIES = 4


def notes_config(cli_home: Path, *flags: str, extra: str = "") -> None:
    args = json.dumps([str(NOTES_SERVER), *flags])
    write_config(
        cli_home,
        f"[mcp.servers.n]\ncommand = {toml_str(sys.executable)}\nargs = {args}\n"
        f'sandbox = "none"\n{extra}\n',
    )


def hang_call() -> Reply:
    call = {"id": "call_hang", "name": "mcp__n__hang", "arguments": {"seconds": 600}}
    return Reply.tool_calls([call])


def cancelled_ids(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [
        line.split()[1] for line in log.read_text().splitlines() if line.startswith("cancelled")
    ]


def test_timeout_cancels_the_call_on_the_server_every_time(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "cancelled.log"
    notes_config(cli_home, "--cancel-log", str(log))
    for attempt in range(1, TRIES + 1):
        server.enqueue(hang_call())
        result = run_cli(["run", "--yes", "--timeout", "8", "go"], server=server, timeout=60)
        assert result.returncode == 3, result.stdout  # the documented --timeout code
        assert "Future exception" not in result.stderr, result.stderr
        assert len(cancelled_ids(log)) == attempt, (
            attempt,
            log.read_text() if log.exists() else "",
        )
    assert all(request_id.isdigit() for request_id in cancelled_ids(log))


def test_ctrl_c_cancels_the_call_on_the_server_every_time(
    start_cli: StartCli, server: ScriptedServer, cli_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "cancelled.log"
    notes_config(cli_home, "--cancel-log", str(log))
    for attempt in range(1, TRIES + 1):
        server.enqueue(hang_call())
        process = start_cli(["run", "--yes", "-o", "jsonl", "go"], server=server)
        deadline = time.monotonic() + 60
        seen = ""
        while "TOOL_CALL_START" not in seen and time.monotonic() < deadline:
            line = process.stdout.readline()  # type: ignore[union-attr]
            if not line:
                break
            seen += line
        assert "TOOL_CALL_START" in seen, seen
        time.sleep(0.5)  # the call is on its way to the server
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
        assert process.returncode == 130, process.returncode
        assert len(cancelled_ids(log)) == attempt, attempt
