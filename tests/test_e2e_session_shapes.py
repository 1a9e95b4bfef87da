"""End-to-end: session files read defensively. A line of any shape — valid JSON of the
wrong types, not JSON, not UTF-8 — is skipped with a warning naming the file and the line;
`sessions list`, `show`, `export` and `--continue` work on the rest. A file or directory
that cannot be read is one line naming it. A tool's result is stored once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENTCLI, RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_sessions import (
    assert_valid_history,
    only_session,
    records,
    sessions_dir,
    warning_lines,
)

SESSION_ID = "20260101-000000-abcdef"
BAD_SHAPES = {
    "message-text": {"t": "message", "m": "text"},
    "role-number": {"t": "message", "m": {"role": 5, "content": "x"}},
    "content-null": {"t": "message", "m": {"role": "user", "content": None}},
    "content-object": {"t": "message", "m": {"role": "user", "content": {"x": 1}}},
    "calls-text": {"t": "message", "m": {"role": "assistant", "toolCalls": "x"}},
    "call-id-number": {"t": "message", "m": {"role": "assistant", "toolCalls": [{"id": 1}]}},
    "result-without-call": {"t": "message", "m": {"role": "tool", "content": "r"}},
    "extra-list": {"t": "message", "m": {"role": "user", "content": "x", "extra": [1]}},
    "event-list": {"t": "event", "e": []},
    "usage-words": {
        "t": "event",
        "e": {"type": "CUSTOM", "name": "usage", "value": {"totalTokens": "many"}},
    },
    "usage-list": {"t": "event", "e": {"type": "CUSTOM", "name": "usage", "value": [1]}},
    "delta-number": {"t": "event", "e": {"type": "TEXT_MESSAGE_CONTENT", "delta": 5}},
    "compaction-types": {"t": "compaction", "summary": 5, "start": "x"},
    "kind-number": {"t": 7},
    "empty-object": {},
    "list": [1, 2, 3],
    "null": None,
    "second-header": {"t": "session", "id": "other", "workspace": 5},
}


def header(workspace: Path, **changes: Any) -> dict[str, Any]:
    return {
        "t": "session",
        "id": SESSION_ID,
        "created": "2026-01-01T00:00:00+0000",
        "workspace": str(workspace),
        "model": "openai:m",
        "agentcli": "0",
        "format": 1,
        **changes,
    }


def message(role: str, content: str, number: int) -> dict[str, Any]:
    return {"t": "message", "m": {"id": f"m{number}", "role": role, "content": content}}


def write_session(cli_home: Path, lines: list[bytes], session_id: str = SESSION_ID) -> Path:
    directory = sessions_dir(cli_home)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{session_id}.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def encoded(record: Any) -> bytes:
    return json.dumps(record).encode()


def good_lines(workspace: Path) -> list[bytes]:
    return [
        encoded(header(workspace)),
        encoded(message("user", "hello", 1)),
        encoded(message("assistant", "world", 2)),
    ]


def assert_warned(stderr: str, path: Path, line: int) -> None:
    lines = warning_lines(stderr)
    assert any(str(path) in w and f"line {line}" in w for w in lines), stderr


def test_a_line_of_any_shape_is_skipped_and_said(
    run_cli: RunCli, workspace: Path, cli_home: Path
) -> None:
    """One session per shape, its bad line between the two good messages: each is listed
    with its first prompt, each bad line said with its file and number; and shown."""
    paths = {}
    for number, shape in enumerate(BAD_SHAPES.values()):
        session_id = f"20260101-000000-{number:06d}"
        lines = [encoded(header(workspace, id=session_id)), *good_lines(workspace)[1:]]
        lines.insert(2, encoded(shape))  # line 3, between the two messages
        paths[session_id] = write_session(cli_home, lines, session_id)

    listing = run_cli(["sessions", "list"])
    assert listing.returncode == 0, listing.stderr
    listed = [line for line in listing.stdout.splitlines() if "hello" in line]
    assert len(listed) == len(BAD_SHAPES), listing.stdout
    for path in paths.values():
        assert_warned(listing.stderr, path, 3)
    session_id, path = next(iter(paths.items()))
    shown = run_cli(["sessions", "show", session_id])
    assert shown.returncode == 0, shown.stderr
    assert "hello" in shown.stdout and "world" in shown.stdout
    assert_warned(shown.stderr, path, 3)


def test_export_and_continue_work_on_the_rest_of_a_damaged_file(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    lines = good_lines(workspace)
    for shape in BAD_SHAPES.values():
        lines.insert(2, encoded(shape))
    lines.insert(2, b'{"t": "message", "m": {"role": "us')  # cut mid-line by a crash
    lines.insert(2, b"\xff\xfe not JSON at all")
    path = write_session(cli_home, lines)

    exported = run_cli(["sessions", "export", SESSION_ID, "--format", "json"])
    assert exported.returncode == 0, exported.stderr
    document = json.loads(exported.stdout)
    assert [m["content"] for m in document["messages"]] == ["hello", "world"]
    warnings = warning_lines(exported.stderr)
    assert len(warnings) == 6, warnings  # five lines in full, then the count of the rest
    assert f"{len(BAD_SHAPES) + 2 - 5} more damaged lines skipped" in warnings[-1]

    server.enqueue(Reply.text(["again"]))
    again = run_cli(["run", "--continue", "more"], server=server)
    assert again.returncode == 0, again.stderr
    sent = server.requests[0].json["messages"]
    assert [m["content"] for m in sent[1:]] == ["hello", "world", "more"]
    assert_valid_history(sent)
    assert str(path) in again.stderr


def test_an_invalid_byte_early_in_a_file_does_not_hide_it_from_continue(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    lines = good_lines(workspace)
    lines[0] = lines[0].replace(b'"openai:m"', b'"openai:m\xff"')  # inside a string
    lines[1] = lines[1].replace(b"hello", b"h\xe9llo")  # latin-1, in the first 8 KB
    write_session(cli_home, lines)
    server.enqueue(Reply.text(["found"]))
    result = run_cli(["run", "--continue", "more"], server=server)
    assert result.returncode == 0, result.stderr
    assert server.requests[0].json["messages"][1]["content"] == "h\ufffdllo"


def test_a_damaged_header_leaves_the_session_readable_and_resumable(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    lines = good_lines(workspace)
    lines[0] = b'{"t": "session", "id": "' + SESSION_ID.encode() + b'", "workspace": 5}'
    path = write_session(cli_home, lines)

    shown = run_cli(["sessions", "show", SESSION_ID])
    assert shown.returncode == 0 and "world" in shown.stdout, shown.stderr
    assert_warned(shown.stderr, path, 1)
    listing = run_cli(["sessions", "list"])
    assert listing.returncode == 0 and SESSION_ID in listing.stdout, listing.stderr

    continued = run_cli(["run", "--continue", "more"], server=server)
    assert continued.returncode == 2  # no session of this workspace, and why this one is not
    [warning] = warning_lines(continued.stderr)
    assert str(path) in warning and f"--resume {SESSION_ID}" in warning, warning
    server.enqueue(Reply.text(["resumed"]))
    resumed = run_cli(["run", "--resume", SESSION_ID, "more"], server=server)
    assert resumed.returncode == 0, resumed.stderr
    assert [m["content"] for m in server.requests[-1].json["messages"][1:3]] == ["hello", "world"]


# --- permissions: root reads everything, so the commands run without DAC capabilities


def without_file_permissions() -> list[str]:
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}", str(AGENTCLI)]


def can_drop_capabilities() -> bool:
    if shutil.which("setpriv") is None:
        return False
    probe = subprocess.run([*without_file_permissions()[:-1], "true"], check=False)
    return probe.returncode == 0


needs_setpriv = pytest.mark.skipif(not can_drop_capabilities(), reason="needs setpriv")


@needs_setpriv
def test_an_unreadable_session_file_is_one_line_naming_it(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    path = write_session(cli_home, good_lines(workspace))
    other = path.with_name("20260101-000001-bbbbbb.jsonl")
    lines = [encoded(header(workspace, id=other.stem)), *good_lines(workspace)[1:]]
    other.write_bytes(b"".join(line + b"\n" for line in lines))
    os.chmod(path, 0)
    prefix = without_file_permissions()

    shown = run_cli(["sessions", "show", SESSION_ID], executable=prefix)
    assert shown.returncode == 1
    assert_one_error(shown, str(path), "Permission denied")
    listing = run_cli(["sessions", "list"], executable=prefix)
    assert listing.returncode == 0, listing.stderr
    assert "20260101-000001-bbbbbb" in listing.stdout and SESSION_ID not in listing.stdout
    [warning] = warning_lines(listing.stderr)
    assert str(path) in warning and "Permission denied" in warning, warning

    os.utime(path)  # the newest: --continue reads it first, says so, takes the other
    server.enqueue(Reply.text(["on"]))
    again = run_cli(["run", "--continue", "more"], server=server, executable=prefix)
    assert again.returncode == 0, again.stderr
    [warning] = warning_lines(again.stderr)
    assert str(path) in warning and "--continue leaves it out" in warning, warning


@needs_setpriv
def test_an_unreadable_sessions_directory_is_one_line_naming_it(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    write_session(cli_home, good_lines(workspace))
    directory = sessions_dir(cli_home)
    os.chmod(directory, 0)
    prefix = without_file_permissions()
    try:
        listing = run_cli(["sessions", "list"], executable=prefix)
        assert listing.returncode == 1
        assert_one_error(listing, str(directory), "Permission denied")
        again = run_cli(["run", "--continue", "more"], server=server, executable=prefix)
        assert again.returncode == 1
        assert_one_error(again, str(directory), "Permission denied")
        shown = run_cli(["sessions", "show", SESSION_ID], executable=prefix)
        assert shown.returncode == 1
        assert_one_error(shown, str(directory), "Permission denied")
    finally:
        os.chmod(directory, 0o700)


# --- one copy of a result


def test_a_tool_result_is_stored_once_and_restored(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    big = "".join(f"{n:05d} " + "x" * 93 + "\n" for n in range(2000))  # 200 KB
    (workspace / "big.txt").write_text(big)
    call = {"id": "call_big", "name": "read_file", "arguments": {"path": "big.txt"}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["read"]), Reply.text(["again"]))
    first = run_cli(["run", "read it"], server=server)
    assert first.returncode == 0, first.stderr
    [result] = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    path = only_session(cli_home)
    size = path.stat().st_size
    assert len(result["content"]) > 200_000
    assert size < 1.2 * len(result["content"]), size  # once, not twice

    again = run_cli(["run", "--continue", "and?"], server=server)
    assert again.returncode == 0, again.stderr
    [restored] = [m for m in server.requests[2].json["messages"] if m["role"] == "tool"]
    assert restored["content"] == result["content"]
    stored = [r for r in records(path) if r.get("t") == "message" and r["m"]["role"] == "tool"]
    assert "content" not in stored[0]["m"] and stored[0]["m"]["contentInEvent"]
