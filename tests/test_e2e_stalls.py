"""End-to-end: servers that stall or answer with something else. A silent server is given
up on after the first-byte timeout and the overall cap (configurable), silence is shown as
"waiting for the server… Ns" on stderr and as a CUSTOM event, a web page in place of the
event stream is named as such, and a 429 asking for a longer pause than agentcli waits
stops at once."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from tests.conftest import RunCli, StartCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer
from tests.sse_server import Gate
from tests.test_e2e_sessions import jsonl_events


def configure(cli_home: Path, **values: float) -> None:
    lines = ["[requests]", *(f"{key} = {value}" for key, value in values.items())]
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("\n".join(lines) + "\n")


def test_a_silent_server_is_given_up_on(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    configure(cli_home, first_byte_timeout=1, max_wait=4)
    server.enqueue(*[Reply.hang(30) for _ in range(5)])
    started = time.monotonic()
    result = run_cli(["run", "hi"], server=server)
    took = time.monotonic() - started

    assert result.returncode == 1, result.stderr
    assert_one_error(result, "requests.max_wait")
    assert took < 8, took
    assert 2 <= len(server.requests) <= 4  # each attempt cut at the first-byte timeout
    assert "retrying" in result.stderr and "sent nothing for 1s" in result.stderr


def test_one_stalled_attempt_is_retried(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    configure(cli_home, first_byte_timeout=1)
    server.enqueue(Reply.hang(30), Reply.text(["Answered."]))
    result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Answered.\n"


def silent_until_announced(
    start_cli: StartCli, server: ScriptedServer, reply: Reply, at: int, args: list[str]
) -> tuple[str, str]:
    """Runs agentcli on a reply that goes silent after `at` steps until agentcli has said
    it waits (its stderr line), then goes on: bound by that line, not by a pause."""
    gate = Gate()
    server.enqueue(dataclasses.replace(reply, steps=(*reply.steps[:at], gate, *reply.steps[at:])))
    process = start_cli(args, server=server)
    assert process.stderr is not None
    said = []
    try:
        for line in process.stderr:
            said.append(line)
            if "waiting for the server" in line:
                break
    finally:
        gate.set()
    out, rest = process.communicate(timeout=120)
    assert process.returncode == 0, "".join(said) + rest
    return out, "".join(said) + rest


@pytest.mark.parametrize("where", ["before the answer", "mid-answer"])
def test_silence_is_announced(start_cli: StartCli, server: ScriptedServer, where: str) -> None:
    at = 1 if where == "mid-answer" else 0  # after "Hello", or before anything
    args = ["run", "-o", "jsonl", "hi"]
    out, err = silent_until_announced(start_cli, server, Reply.text(["Hello", " there."]), at, args)
    waits = [e for e in jsonl_events(out) if e.get("name") == "waiting"]
    assert [e["value"]["seconds"] for e in waits] == [5], waits
    assert "agentcli: waiting for the server… 5s" in err.splitlines()


def test_text_mode_shows_the_wait_on_stderr(start_cli: StartCli, server: ScriptedServer) -> None:
    out, err = silent_until_announced(start_cli, server, Reply.text(["Hello."]), 0, ["run", "hi"])
    assert out == "Hello.\n"
    assert "waiting for the server… 5s" in err


@pytest.mark.parametrize(
    ("lines", "headers", "needle"),
    [
        (
            ["<!DOCTYPE html>", "<html><body>Sign in</body></html>"],
            {"Content-Type": "text/html; charset=utf-8"},
            "sent `text/html`, not an event stream",
        ),
        (
            ["what is this", "no events here"],
            {"Content-Type": "text/plain"},
            "sent `text/plain`, not an event stream",
        ),
        (["garbage", "more garbage"], {}, "sent no events, only 'garbage more garbage'"),
    ],
)
def test_a_body_that_is_not_events_is_named(
    run_cli: RunCli, server: ScriptedServer, lines: list[str], headers: dict, needle: str
) -> None:
    server.enqueue(Reply.raw(lines, headers=headers))
    result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 1
    line = assert_one_error(result, needle, "check the base URL")
    assert "ended before the answer was complete" not in line
    assert len(server.requests) == 1


def test_retry_after_longer_than_the_cap_stops_at_once(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(
        Reply.error(429, "slow down", headers={"Retry-After": "3600"}), Reply.text(["never"])
    )
    started = time.monotonic()
    result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 1
    assert_one_error(result, "rate limited", "asked to wait 1 h")
    assert len(server.requests) == 1
    assert time.monotonic() - started < 5
