"""End-to-end: a hang-up (the terminal closed: SIGHUP) and SIGTERM end agentcli the way
Ctrl-C does — the turn is cancelled, the tools' process trees are killed, the ending is
written — in `run` (exit 129 / 143) and in the REPL on a real pseudo-terminal."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import StartCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_process import assert_dead, sleeper_token, wait_for_pid
from tests.test_repl import Chat, StartChat, chat  # noqa: F401 - the fixture

EXIT_CODES = {signal.SIGHUP: 129, signal.SIGTERM: 143}


def sleeper(token: str) -> Reply:
    """A shell call that sleeps in the foreground, found on the host by its argument."""
    command = f"sh -c 'exec sleep {token}'"
    return Reply.tool_calls([{"id": "c1", "name": "run_shell", "arguments": {"command": command}}])


def chat_running_a_sleeper(start: StartChat, server: ScriptedServer) -> tuple[Chat, int]:
    """A chat whose turn runs a foreground `sleep` (approved by --yes), and that sleep's PID."""
    token = sleeper_token()
    server.enqueue(sleeper(token))
    session = start("--yes")
    session.submit("sleep")
    pid = wait_for_pid(token)
    session.extra_pids.append(pid)
    return session, pid


def session_events(home: Path) -> list[dict]:
    [path] = (home / "agentcli" / "data" / "sessions").glob("*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r["e"] for r in records if r.get("t") == "event"]


@pytest.mark.parametrize("number", [signal.SIGHUP, signal.SIGTERM])
def test_run_cleans_up_and_writes_the_ending(
    start_cli: StartCli, server: ScriptedServer, workspace: Path, number: signal.Signals
) -> None:
    token = sleeper_token()
    server.enqueue(sleeper(token))
    process = start_cli(["run", "--yes", "-o", "jsonl", "sleep"], server=server)
    pid = wait_for_pid(token)
    process.send_signal(number)
    out, err = process.communicate(timeout=10)

    assert process.returncode == EXIT_CODES[number], err
    assert "Traceback" not in err
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR"), events[-3:]
    assert events[-1].get("outcome") == {"type": "cancelled"}
    assert any(e["type"] == "TOOL_CALL_START" and e["toolCallId"] == "c1" for e in events)
    assert_dead(pid)


@pytest.mark.parametrize("number", [signal.SIGHUP, signal.SIGTERM])
def test_repl_during_a_tool_cleans_up_and_exits(
    chat: StartChat,  # noqa: F811
    server: ScriptedServer,
    workspace: Path,
    cli_home: Path,
    number: signal.Signals,
) -> None:
    session, pid = chat_running_a_sleeper(chat, server)
    session.child.kill(number)

    assert session.exit_status() == EXIT_CODES[number]
    assert_dead(pid)
    ending = session_events(cli_home)[-1]
    assert ending["type"] == "RUN_FINISHED" and ending["outcome"] == {"type": "cancelled"}


@pytest.mark.parametrize("number", [signal.SIGHUP, signal.SIGTERM])
def test_repl_at_the_prompt_exits(
    chat: StartChat,  # noqa: F811
    number: signal.Signals,
) -> None:
    session = chat()
    time.sleep(0.2)
    session.child.kill(number)
    assert session.exit_status() == EXIT_CODES[number]


def test_repl_when_the_terminal_really_closes(
    chat: StartChat,  # noqa: F811
    server: ScriptedServer,
    workspace: Path,
) -> None:
    """The real thing: the pseudo-terminal's master side closes, the kernel hangs up."""
    session, pid = chat_running_a_sleeper(chat, server)
    session.child.ptyproc.fileobj.close()  # the window closes
    deadline = time.monotonic() + 10
    while session.child.isalive() and time.monotonic() < deadline:
        time.sleep(0.05)

    assert session.child.exitstatus == 129
    assert_dead(pid)
