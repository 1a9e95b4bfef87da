"""End-to-end: the session file under faults — a full disk (a file-size limit stands in for
it: it fails for root too), a data directory that cannot be written, a read-only home, two
writers of one session, and a very long answer. The run's outputs always get every event
and a proper ending; the session file gets what it can, and one line says what it lost."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENTCLI, RunCli, build_env
from tests.replying_server import ReplyingServer
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_sessions import (
    assert_valid_history,
    jsonl_events,
    messages,
    only_session,
    records,
    session_files,
    sessions_dir,
    warning_lines,
)
from tests.test_repl import StartChat, chat  # noqa: F401 - the fixture

PIECES = [f"piece{i:03d} " for i in range(300)]


def with_file_size_limit(limit: int) -> list[str]:
    """An executable prefix: agentcli run under RLIMIT_FSIZE, so that writing past `limit`
    bytes into any file fails (EFBIG) as a full disk would — root included. (No bytecode
    written under it: a cut .pyc would break every later run.)"""
    code = (
        "import os, resource, sys; "
        "os.environ['PYTHONDONTWRITEBYTECODE'] = '1'; "
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    return [sys.executable, "-c", code, str(AGENTCLI)]


def test_a_full_disk_mid_answer_loses_nothing_on_stdout(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(Reply.text(PIECES))
    result = run_cli(
        ["run", "-o", "jsonl", "talk"], server=server, executable=with_file_size_limit(3000)
    )

    assert result.returncode == 0, result.stderr
    events = jsonl_events(result.stdout)
    deltas = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert "".join(deltas) == "".join(PIECES)
    assert events[-1]["type"] == "RUN_FINISHED"
    path = only_session(cli_home)
    [line] = warning_lines(result.stderr)
    assert str(path) in line and "File too large" in line and "not saved" in line, line
    assert 0 < path.stat().st_size <= 3000


def test_a_full_disk_in_text_mode(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(PIECES))
    result = run_cli(["run", "talk"], server=server, executable=with_file_size_limit(1500))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "".join(PIECES) + "\n"
    assert len(warning_lines(result.stderr)) == 1


def data_is_a_file(cli_home: Path) -> Path:
    """A file where the data directory should be: nothing can be created in it, root or not."""
    data = cli_home / "agentcli" / "data"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text("not a directory\n")
    return data


def test_an_unwritable_data_directory_still_runs(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    data = data_is_a_file(cli_home)
    server.enqueue(Reply.text(["All ", "fine."]))
    result = run_cli(["run", "-o", "jsonl", "hi"], server=server)

    assert result.returncode == 0, result.stderr
    assert jsonl_events(result.stdout)[-1]["type"] == "RUN_FINISHED"
    [line] = warning_lines(result.stderr)
    assert str(data / "sessions") in line and "Not a directory" in line, line
    assert "internal error" not in result.stderr


def test_the_repl_goes_on_unsaved(
    chat: StartChat,  # noqa: F811
    server: ScriptedServer,
    cli_home: Path,
) -> None:
    data_is_a_file(cli_home)
    server.enqueue(Reply.text(["First."]), Reply.text(["Second."]))
    session = chat(cpr=True)
    assert "not saved" in session.screen()  # said once, at the start
    assert "First." in session.turn("one")
    assert "Second." in session.turn("two")
    session.expect("not saved")  # the toolbar says so, once prompt-toolkit has drawn it
    assert [m["role"] for m in messages(server, 1)] == ["system", "user", "assistant", "user"]


# --- a read-only home (a read-only bind mount: chmod does not stop root) ---


def read_only(directory: Path) -> list[str]:
    """An executable prefix: agentcli in a mount namespace where `directory` is read-only."""
    script = (
        f'mount --bind "{directory}" "{directory}" && '
        f'mount -o remount,ro,bind "{directory}" "{directory}" && exec "$@"'
    )
    return ["unshare", "-m", "sh", "-c", script, "sh", str(AGENTCLI)]


def can_mount() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs none /mnt"], capture_output=True, check=False
    )
    return probe.returncode == 0


@pytest.mark.skipif(not can_mount(), reason="needs unshare and mount (mount namespaces)")
def test_read_only_commands_work_on_a_read_only_home(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(Reply.text(["Saved."]), Reply.text(["Not saved."]))
    assert run_cli(["run", "hello"], server=server).returncode == 0
    (sessions_dir(cli_home) / "summaries.json").unlink(missing_ok=True)
    prefix = read_only(cli_home)

    listing = run_cli(["sessions", "list"], executable=prefix)
    assert listing.returncode == 0, listing.stderr
    assert "hello" in listing.stdout
    session_id = only_session(cli_home).stem
    shown = run_cli(["sessions", "show", session_id], executable=prefix)
    assert shown.returncode == 0 and "Saved." in shown.stdout, shown.stderr
    config = run_cli(["config", "show"], executable=prefix)
    assert config.returncode == 0 and "max_steps" in config.stdout, config.stderr

    again = run_cli(["run", "--continue", "more"], server=server, executable=prefix)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "Not saved.\n"
    [line] = warning_lines(again.stderr)
    assert "Read-only file system" in line and session_id in line, line


# --- two writers, one session ---


class ToolThenText(ReplyingServer):
    """Answers a request that ends with a tool result with text, any other with a tool
    call: each run's own two steps, however concurrent runs interleave their requests."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def reply_for(self, request: Any) -> Reply:
        last = request.json["messages"][-1]
        if last["role"] == "tool":
            return Reply.text(["read it"])
        with self._cond:
            self.calls += 1
            call_id = f"call_{self.calls}"
        return Reply.tool_calls(
            [{"id": call_id, "name": "read_file", "arguments": {"path": "README.md"}}]
        )


def test_ten_concurrent_continues_leave_a_session_that_continues(
    run_cli: RunCli, workspace: Path, cli_home: Path
) -> None:
    with ToolThenText() as server:
        assert run_cli(["run", "start"], server=server).returncode == 0
        env = build_env(cli_home, server)
        pipes = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
        runs = [
            subprocess.Popen(
                [str(AGENTCLI), "run", "--continue", f"turn {n}"],
                cwd=workspace,
                env=env,
                text=True,
                **pipes,
            )
            for n in range(10)
        ]
        outcomes = []
        for process in runs:
            _, err = process.communicate(timeout=120)
            outcomes.append((process.returncode, err))
        finished = [code for code, _ in outcomes if code == 0]
        refused = [err for code, err in outcomes if code == 1]
        assert len(finished) + len(refused) == 10, outcomes
        assert finished, outcomes
        for err in refused:
            assert "in use by another agentcli" in err and err.count("\n") == 1, err

        last = run_cli(["run", "--continue", "last"], server=server)
        assert last.returncode == 0, last.stderr
        sent = server.requests[-2].json["messages"]  # the last run's first request
        assert_valid_history(sent)
        users = [m["content"] for m in sent if m["role"] == "user"]
        assert users[0] == "start" and users[-1] == "last"
        assert len(users) == 2 + len(finished), users
        assert len(session_files(cli_home)) == 1


# --- a very long answer ---


def test_a_long_answer_is_a_small_file_and_loads_again(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    pieces = [f"w{i} " for i in range(20_000)]
    server.enqueue(Reply.text(pieces), Reply.text(["ok"]))
    first = run_cli(["run", "-o", "jsonl", "a long one"], server=server, timeout=120)
    assert first.returncode == 0, first.stderr
    deltas = [e for e in jsonl_events(first.stdout) if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert len(deltas) == len(pieces)  # stdout still gets every piece

    path = only_session(cli_home)
    text = "".join(pieces)
    stored = [r for r in records(path) if r.get("e", {}).get("type") == "TEXT_MESSAGE_CONTENT"]
    assert "".join(r["e"]["delta"] for r in stored) == text
    assert len(stored) < len(pieces) / 20, len(stored)
    assert path.stat().st_size < 4 * len(text.encode())

    again = run_cli(["run", "--continue", "next"], server=server)
    assert again.returncode == 0, again.stderr
    assert messages(server, 1)[2] == {"role": "assistant", "content": text}


def peak_memory_mb(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Runs agentcli and returns its peak resident memory in MB, and its stdout."""
    code = (
        "import resource, subprocess, sys; "
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "sys.stdout.write(done.stdout[-2000:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(AGENTCLI), *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=300,
    )
    *out, peak = done.stdout.splitlines()
    return int(peak) / 1024, "\n".join(out)


def test_a_huge_session_file_is_read_in_bounded_memory(cli_home: Path) -> None:
    """A file written by an older agentcli, one line per streamed piece: listing it and
    showing it read it line by line."""
    directory = sessions_dir(cli_home)
    directory.mkdir(parents=True)
    session_id = "20260101-000000-aaaaaa"
    header = {
        "t": "session",
        "id": session_id,
        "created": "2026-01-01T00:00:00+0000",
        "workspace": "/w",
        "model": "openai:m",
        "agentcli": "0",
        "format": 1,
    }
    piece = {"t": "event", "e": {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x "}}
    line = json.dumps(piece) + "\n"
    count = 600_000
    with open(directory / f"{session_id}.jsonl", "w") as stream:
        stream.write(json.dumps(header) + "\n")
        stream.write(
            json.dumps({"t": "message", "m": {"id": "u", "role": "user", "content": "go"}}) + "\n"
        )
        for _ in range(count // 1000):
            stream.write(line * 1000)
        answer = {"id": "m", "role": "assistant", "content": "x " * count}
        stream.write(json.dumps({"t": "message", "m": answer}) + "\n")
    size_mb = (directory / f"{session_id}.jsonl").stat().st_size / 2**20
    env = build_env(cli_home)
    small_id = "20260101-000000-bbbbbb"
    (directory / f"{small_id}.jsonl").write_text(json.dumps({**header, "id": small_id}) + "\n")
    baseline, _ = peak_memory_mb(["sessions", "show", small_id], env)

    for args in (["sessions", "list"], ["sessions", "show", session_id]):
        peak, out = peak_memory_mb(args, env)
        assert "x x" in out or "go" in out, out
        assert peak - baseline < size_mb / 4, (args, peak, baseline, size_mb)


def test_the_repl_survives_a_full_disk_mid_turn(
    server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    import io

    import pexpect

    from tests.test_repl import COLUMNS, ROWS, Chat

    extra = {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    [python, *rest] = with_file_size_limit(3000)
    child = pexpect.spawn(
        python,
        [*rest, "chat"],
        env=build_env(cli_home, server, extra),
        cwd=str(workspace),
        dimensions=(ROWS, COLUMNS),
        encoding="utf-8",
        codec_errors="replace",
        timeout=10,
    )
    log = io.StringIO()
    child.logfile_read = log
    session = Chat(child, log)
    try:
        session.prompt()
        server.enqueue(Reply.text(PIECES), Reply.text(["Still here."]))
        screen = session.turn("talk a lot")
        assert PIECES[-1].strip() in screen
        assert "not saved" in screen and "File too large" in screen
        assert "Still here." in session.turn("and now?")
        assert "Traceback" not in session.screen()
    finally:
        session.close()
