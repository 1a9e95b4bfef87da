"""Processes started through the CLI never outlive agentcli: background jobs die when it
exits normally or on SIGTERM, and a timed-out command's whole tree is killed."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import psutil

from tests.conftest import RunCli, StartCli
from tests.scripted_server import Reply, ScriptedServer


def background(pid_file: str) -> Reply:
    command = f"sh -c 'echo $$ > {pid_file}; exec sleep 300'"
    return Reply.tool_calls(
        [{"name": "run_shell", "arguments": {"command": command, "background": True}}]
    )


def wait_for_pid(path: Path) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


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
    server.enqueue(background("job.pid"), Reply.text(["started it"]))
    result = run_cli(["run", "--yes", "start a server"], server=server)
    assert result.returncode == 0, result.stderr
    tool_message = server.requests[1].json["messages"][-1]
    assert tool_message["role"] == "tool" and "started job_1" in tool_message["content"]
    assert_dead(wait_for_pid(workspace / "job.pid"))


def test_background_job_is_killed_when_agentcli_gets_sigterm(
    start_cli: StartCli, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(background("job.pid"), Reply.hang(30))
    process = start_cli(["run", "--yes", "start a server"], server=server)
    pid = wait_for_pid(workspace / "job.pid")
    assert server.wait_for_requests(2, timeout=10)
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=10)
    assert process.returncode == 143
    assert_dead(pid)


def test_timed_out_command_tree_is_killed_and_reported(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    command = "setsid sh -c 'echo $$ > grandchild.pid; exec sleep 300' & sleep 300"
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
    assert_dead(wait_for_pid(workspace / "grandchild.pid"))


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
