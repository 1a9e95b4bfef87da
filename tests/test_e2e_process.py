"""Processes started through the CLI never outlive agentcli: background jobs die when it
exits normally or on SIGTERM, and a timed-out command's whole tree is killed."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import psutil

from tests.conftest import RunCli, StartCli
from tests.scripted_server import Reply, ScriptedServer


def sleeper_token() -> str:
    """A `sleep` argument no other process has: how a test finds its process on the host
    (a PID written from inside the sandbox is a PID of the sandbox's own namespace)."""
    return f"300.{os.getpid() % 1000}{time.time_ns() % 10**6}"


def background(token: str) -> Reply:
    command = f"sh -c 'exec sleep {token}'"
    return Reply.tool_calls(
        [{"name": "run_shell", "arguments": {"command": command, "background": True}}]
    )


def wait_for_pid(token: str) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for proc in psutil.process_iter(["cmdline"]):
            if proc.info["cmdline"] == ["sleep", token]:
                return proc.pid
        time.sleep(0.05)
    raise AssertionError(f"no process `sleep {token}` appeared")


def assert_dead(pid: int) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} outlived agentcli")


def test_background_job_is_killed_when_agentcli_finishes(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    token = sleeper_token()
    server.enqueue(background(token), Reply.text(["started it"]))
    result = run_cli(["run", "--yes", "start a server"], server=server)
    assert result.returncode == 0, result.stderr
    tool_message = server.requests[1].json["messages"][-1]
    assert tool_message["role"] == "tool" and "started job_1" in tool_message["content"]
    assert not any(p.info["cmdline"] == ["sleep", token] for p in psutil.process_iter(["cmdline"]))


def test_background_job_is_killed_when_agentcli_gets_sigterm(
    start_cli: StartCli, server: ScriptedServer, workspace: Path
) -> None:
    token = sleeper_token()
    server.enqueue(background(token), Reply.hang(30))
    process = start_cli(["run", "--yes", "start a server"], server=server)
    pid = wait_for_pid(token)
    assert server.wait_for_requests(2, timeout=10)
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=10)
    assert process.returncode == 143
    assert_dead(pid)


def test_timed_out_command_tree_is_killed_and_reported(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    token = sleeper_token()
    command = f"setsid sh -c 'exec sleep {token}' & sleep 300"
    server.enqueue(
        Reply.tool_calls([{"name": "run_shell", "arguments": {"command": command, "timeout": 1}}]),
        Reply.text(["it timed out"]),
    )
    started = time.monotonic()
    result = run_cli(["run", "--yes", "--output", "json", "run it"], server=server)
    assert time.monotonic() - started < 15
    assert result.returncode == 0, result.stderr
    (call,) = json.loads(result.stdout)["toolCalls"]
    assert "exit code 124" in call["result"] and "timed out after 1s" in call["result"]
    assert call["error"]
    assert not any(p.info["cmdline"] == ["sleep", token] for p in psutil.process_iter(["cmdline"]))


def test_shell_tool_is_denied_without_a_terminal_or_flag(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(
        Reply.tool_calls([{"name": "run_shell", "arguments": {"command": "touch made.txt"}}]),
        Reply.text(["ok"]),
    )
    result = run_cli(["run", "make a file"], server=server)
    assert result.returncode == 4
    assert not (workspace / "made.txt").exists()
    assert "denied" in server.requests[1].json["messages"][-1]["content"]
