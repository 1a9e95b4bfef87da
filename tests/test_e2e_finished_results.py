"""End-to-end: when a step's parallel calls are interrupted (Ctrl-C, SIGTERM, kill -9), the
calls that had finished keep their real results — in the session file and in what the
model is sent on --continue — and only the unfinished ones are marked interrupted."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import RunCli, StartCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_process import sleeper_token, wait_for_pid
from tests.test_e2e_sessions import assert_valid_history, messages, only_session, stored_messages

FAST = {"id": "fast", "name": "run_shell", "arguments": {"command": "echo fast-done"}}


def slow_call(token: str) -> dict:
    return {"id": "slow", "name": "run_shell", "arguments": {"command": f"exec sleep {token}"}}


def wait_for_stored_result(path: Path, call_id: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError, KeyError):
            if any(m.get("toolCallId") == call_id for m in stored_messages(path)):
                return
        time.sleep(0.05)
    pytest.fail(f"the result of {call_id} was not recorded while the other call ran")


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_finished_results_survive_an_interruption(
    start_cli: StartCli,
    run_cli: RunCli,
    server: ScriptedServer,
    workspace: Path,
    cli_home: Path,
    number: signal.Signals,
) -> None:
    token = sleeper_token()
    server.enqueue(Reply.tool_calls([slow_call(token), FAST]), Reply.text(["Recovered."]))
    process = start_cli(["run", "--yes", "do both"], server=server)
    slow_pid = wait_for_pid(token)
    try:
        wait_for_stored_result(only_session(cli_home), "fast")
        process.send_signal(number)
        process.communicate(timeout=10)

        result = run_cli(["run", "--continue", "next"], server=server)
        assert result.returncode == 0, result.stderr
        sent = messages(server, 1)
        assert_valid_history(sent)
        results = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
        assert results["fast"].strip().endswith("fast-done"), results
        assert "fast-done" in results["fast"] and "interrupted" not in results["fast"].lower()
        assert "interrupted" in results["slow"].lower(), results
        assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ["slow", "fast"]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(slow_pid, signal.SIGKILL)  # kill -9 leaves it: containment is elsewhere
